import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Mailer } from '../mail/mailer.js'
import type { AuditAction, AuditActor } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import { insertAuditEvent } from '../db/audit-events.js'
import { findUserByEmail, normalizeEmail } from '../db/users.js'
import { findWorkspace, insertWorkspace } from '../db/workspaces.js'
import {
  findPendingInvitationByWorkspaceName, refreshInvitationToken, upsertPendingInvitation
} from '../db/invitations.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { noIdentityProvider } from '../idp/invitations.js'
import { deliverInvitation } from './delivery.js'
import { signupLink } from './email.js'
import { validateFirstAdminInput } from './validate.js'

// The first admin of a workspace (npm run create-admin): a new workspace and an admin invitation
// nobody sent, e-mailed with the same template as every invitation when a mailer is given.
// Running it again for the same e-mail and workspace name re-issues that invitation (fresh link)
// instead of making a second workspace.

const CREATE_ADMIN_ACTOR: AuditActor = { type: 'system', id: null, label: 'create-admin' }

export interface FirstAdminResult {
  workspaceId: string
  workspaceName: string
  invitationId: string
  email: string
  expiresAt: Date
  link: string
  /** true: a pending admin invitation existed and was re-issued. */
  reissued: boolean
  /** 'sent' when e-mailed, 'skipped' without a mailer, 'failed' when sending failed (the link still works). */
  delivery: 'sent' | 'skipped' | 'failed'
}

export async function createFirstAdmin (
  deps: { db: Database, clock: Clock, config: Config, log: Logger, mailer: Mailer | null },
  input: { email: string, workspaceName: string }
): Promise<FirstAdminResult> {
  const { db, clock, config } = deps
  const problem = validateFirstAdminInput(input)
  if (problem !== null) throw serviceError('VALIDATION_FAILED', [problem])
  const email = normalizeEmail(input.email)
  const workspaceName = input.workspaceName.trim()
  const token = randomToken(32)
  const now = clock.now()
  const expiresAt = new Date(now.getTime() + config.invitationTtlDays * 86_400_000)

  // Both branches record the same audit entry but for its action: create-admin, the admin role.
  const audit = async (tx: Queryable, action: AuditAction, workspaceId: string, invitationId: string) => {
    await insertAuditEvent(tx, {
      workspaceId,
      action,
      actor: CREATE_ADMIN_ACTOR,
      target: { type: 'invitation', id: invitationId },
      payload: { email, role: 'admin' },
      now
    })
  }
  const { invitation, workspace, reissued } = await db.transaction(async tx => {
    if (await findUserByEmail(tx, email) !== null) throw serviceError('USER_EXISTS')
    const existing = await findPendingInvitationByWorkspaceName(tx, workspaceName, email, now)
    if (existing !== null) {
      const row = await refreshInvitationToken(tx, existing.id, hashToken(token), expiresAt, now)
      const ws = await findWorkspace(tx, existing.workspaceId)
      if (row === null || ws === null) throw serviceError('INVITATION_NOT_PENDING', ['no longer'])
      await audit(tx, 'invitation.resent', ws.id, row.id)
      return { invitation: row, workspace: ws, reissued: true }
    }
    const ws = await insertWorkspace(tx, { name: workspaceName, now })
    const row = await upsertPendingInvitation(
      tx, { workspaceId: ws.id, email, role: 'admin', tokenHash: hashToken(token), expiresAt, invitedBy: null, now }
    )
    await audit(tx, 'invitation.created', ws.id, row.id)
    return { invitation: row, workspace: ws, reissued: false }
  })

  const result: FirstAdminResult = {
    workspaceId: workspace.id,
    workspaceName: workspace.name,
    invitationId: invitation.id,
    email,
    expiresAt,
    link: signupLink(config.appUrl, token),
    reissued,
    delivery: 'skipped'
  }
  if (deps.mailer === null) return result
  try {
    // The fallback path of every invitation: same template, same delivery records and audit.
    await deliverInvitation({ db, clock, config, log: deps.log, mailer: deps.mailer, idp: noIdentityProvider }, {
      workspace, invitation, token, inviter: { name: null, audit: CREATE_ADMIN_ACTOR, userId: null }, reinvite: reissued
    })
    result.delivery = 'sent'
  } catch {
    result.delivery = 'failed'
  }
  return result
}
