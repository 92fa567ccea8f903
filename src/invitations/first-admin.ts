import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Mailer } from '../ports/mailer.js'
import type { AuditAction, AuditActor } from '../db/audit-events.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import { systemActor } from '../audit/actor.js'
import type { Queryable } from '../db/client.js'
import { findUserByEmail } from '../db/users.js'
import { emailAddress } from '../lib/email.js'
import { findWorkspace, insertWorkspace, type WorkspaceRow } from '../db/workspaces.js'
import {
  findPendingInvitationByWorkspaceName, markInvitationNotSent, refreshInvitationToken, upsertPendingInvitation,
  type InvitationRow
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

const CREATE_ADMIN_ACTOR = systemActor('create-admin')

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

/** One audit entry per admin invitation made or re-issued here; only the action and actor differ. */
async function auditAdminInvitation (
  events: EventOutbox,
  tx: Queryable,
  action: AuditAction,
  actor: AuditActor,
  at: { workspaceId: string, invitationId: string, email: string, now: Date }
): Promise<void> {
  await events.record(tx, {
    workspaceId: at.workspaceId,
    action,
    actor,
    target: { type: 'invitation', id: at.invitationId },
    payload: { email: at.email, role: 'admin' },
    now: at.now
  })
}

/**
 * A new workspace and a pending admin invitation for `email`, audited as made by `actor`. Call it
 * in the caller's transaction: create-admin e-mails the invitation, the setup page accepts it at once.
 */
export async function insertFirstAdminInvitation (
  tx: Queryable,
  input: {
    email: string,
    workspaceName: string,
    tokenHash: string,
    expiresAt: Date,
    now: Date,
    actor: AuditActor,
    events: EventOutbox,
    /** 'not_sent': nobody will e-mail it (the setup page accepts it at once). */
    deliveryStatus?: 'pending' | 'not_sent'
  }
): Promise<{ workspace: WorkspaceRow, invitation: InvitationRow }> {
  const { email, now } = input
  const workspace = await insertWorkspace(tx, { name: input.workspaceName, now })
  const invitation = await upsertPendingInvitation(tx, {
    workspaceId: workspace.id,
    email,
    role: 'admin',
    tokenHash: input.tokenHash,
    expiresAt: input.expiresAt,
    invitedBy: null,
    deliveryStatus: input.deliveryStatus ?? 'pending',
    now
  })
  await auditAdminInvitation(
    input.events, tx, 'invitation.created', input.actor,
    { workspaceId: workspace.id, invitationId: invitation.id, email, now }
  )
  return { workspace, invitation }
}

export async function createFirstAdmin (
  deps: { db: Database, clock: Clock, config: Config, log: Logger, mailer: Mailer | null, events: EventOutbox },
  input: { email: string, workspaceName: string }
): Promise<FirstAdminResult> {
  const { db, clock, config } = deps
  const problem = validateFirstAdminInput(input)
  if (problem !== null) throw serviceError('VALIDATION_FAILED', [problem])
  const email = emailAddress(input.email)
  const workspaceName = input.workspaceName.trim()
  const token = randomToken(32)
  const now = clock.now()
  const expiresAt = new Date(now.getTime() + config.invitationTtlDays * 86_400_000)

  const { invitation, workspace, reissued } = await db.transaction(async tx => {
    if (await findUserByEmail(tx, email) !== null) throw serviceError('USER_EXISTS')
    const existing = await findPendingInvitationByWorkspaceName(tx, workspaceName, email, now)
    if (existing !== null) {
      const row = await refreshInvitationToken(tx, existing.id, hashToken(token), expiresAt, now)
      const ws = await findWorkspace(tx, existing.workspaceId)
      if (row === null || ws === null) throw serviceError('INVITATION_NOT_PENDING', ['no longer'])
      await auditAdminInvitation(
        deps.events, tx, 'invitation.resent', CREATE_ADMIN_ACTOR,
        { workspaceId: ws.id, invitationId: row.id, email, now }
      )
      if (deps.mailer === null) await markInvitationNotSent(tx, row.id)
      return { invitation: row, workspace: ws, reissued: true }
    }
    const created = await insertFirstAdminInvitation(
      tx,
      {
        email,
        workspaceName,
        tokenHash: hashToken(token),
        expiresAt,
        now,
        actor: CREATE_ADMIN_ACTOR,
        events: deps.events,
        // Without a mailer the link is printed for the operator to hand over: no e-mail, ever.
        deliveryStatus: deps.mailer === null ? 'not_sent' : 'pending'
      }
    )
    return { ...created, reissued: false }
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
    const delivery = {
      db, clock, config, log: deps.log, mailer: deps.mailer, idp: noIdentityProvider, events: deps.events
    }
    await deliverInvitation(delivery, {
      workspace, invitation, token, inviter: { name: null, audit: CREATE_ADMIN_ACTOR, userId: null }, reinvite: reissued
    })
    result.delivery = 'sent'
  } catch {
    result.delivery = 'failed'
  }
  return result
}
