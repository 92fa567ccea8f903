import type { Ports } from '../ports/index.js'
import { systemActor } from '../audit/actor.js'
import { anyWorkspaceExists } from '../db/workspaces.js'
import { insertSetupToken, takeSetupTokens } from '../db/setup-tokens.js'
import { emailAddress } from '../lib/email.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken, safeEqual } from '../lib/tokens.js'
import { insertFirstAdminInvitation } from '../invitations/first-admin.js'
import { validateFirstAdminInput } from '../invitations/validate.js'
import type { SessionService } from '../sessions/service.js'
import type { Me } from '../members/directory.js'
import { acceptInTransaction } from './signup.js'

// First run without a second command: while no workspace exists, each start logs a one-time link
// to /setup. Completing it makes the workspace and its first admin exactly as create-admin and
// the signup page would (an admin invitation, accepted at once), in one transaction.
//
// Every link logged while the installation is empty stays valid (several instances may start at
// once against one PostgreSQL; each logs its own link); the first completed setup deletes them
// all, and a start that finds a workspace deletes any left over (made by create-admin meanwhile).

const SETUP_ACTOR = systemActor('setup')

interface SetupInput { token: string, workspaceName: string, email: string, name?: string | undefined }

export interface SetupService {
  /** A new setup link while no workspace exists; null (and no token kept) once one does. */
  issueLink(): Promise<string | null>
  /** Whether the setup page still has anything to do. */
  pending(): Promise<boolean>
  /** The workspace, its first admin and a session; TOKEN_INVALID, or SETUP_COMPLETE once set up. */
  complete(input: SetupInput): Promise<{ me: Me, token: string }>
}

export function createSetupService (
  deps: Pick<Ports, 'db' | 'clock' | 'config' | 'events'> & { sessions: SessionService }
): SetupService {
  const { db, clock, config, events, sessions } = deps
  return {
    async issueLink () {
      return await db.transaction(async tx => {
        if (await anyWorkspaceExists(tx)) {
          await takeSetupTokens(tx)
          return null
        }
        const token = randomToken(32)
        await insertSetupToken(tx, hashToken(token), clock.now())
        return `${config.publicUrl}/setup?token=${token}`
      })
    },

    pending: async () => !await anyWorkspaceExists(db),

    async complete (input) {
      // The contract has checked the shapes; what is left is create-admin's rule that a name is
      // not only spaces (and the one e-mail rule, again, for callers other than the REST door).
      const problem = validateFirstAdminInput(input)
      if (problem !== null) {
        const field = problem.startsWith('--email') ? 'email' : 'workspaceName'
        const message = field === 'email' ? 'must be an e-mail address' : 'must have 1 to 200 characters besides spaces'
        const details = { errors: [{ in: 'body', field, message }] }
        throw serviceError('VALIDATION_FAILED', [`body.${field} ${message}`], details)
      }
      const email = emailAddress(input.email)
      const workspaceName = input.workspaceName.trim()
      return await db.transaction(async tx => {
        // Taking every token first serializes concurrent setups: the second waits for the first
        // transaction, then finds no token and (in a new snapshot) the first one's workspace.
        const hashes = await takeSetupTokens(tx)
        if (await anyWorkspaceExists(tx)) throw serviceError('SETUP_COMPLETE')
        const presented = hashToken(input.token)
        // A wrong token throws, and the rollback puts every token back.
        if (!hashes.some(h => safeEqual(h, presented))) throw serviceError('TOKEN_INVALID')
        const now = clock.now()
        // The first admin's invitation, accepted in the same breath: its token never leaves here.
        const invitationToken = randomToken(32)
        await insertFirstAdminInvitation(tx, {
          email,
          workspaceName,
          tokenHash: hashToken(invitationToken),
          expiresAt: new Date(now.getTime() + config.invitationTtlDays * 86_400_000),
          now,
          actor: SETUP_ACTOR,
          events,
          deliveryStatus: 'not_sent'
        })
        return await acceptInTransaction(tx, sessions, events, { token: invitationToken, name: input.name }, now)
      })
    }
  }
}
