import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { findUserByEmail, type Role } from '../db/users.js'
import { expireStalePendingInvitation, upsertPendingInvitation } from '../db/invitations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { InviteResult } from './delivery.js'
import { recordExpiry } from './expiry.js'
import { rotateAndSend, type InvitationContext } from './context.js'

/** Invite (or re-invite) a normalized e-mail into the actor's workspace, and send it. */
export async function inviteMember (
  ctx: InvitationContext, actor: Principal, email: string, role: Role, idempotencyKey?: string
): Promise<InviteResult> {
  const { events } = ctx.ports
  // A retry of a failed send re-sends the same pending invitation; the upsert takes the lease.
  return await rotateAndSend(ctx, actor, async (tx, { ws, tokenHash, expiresAt, sendLease, now }) => {
    if (await findUserByEmail(tx, email) !== null) throw serviceError('USER_EXISTS')
    // Past its expiry but not yet swept: expired (with its event) before a new one is made.
    const stale = await expireStalePendingInvitation(tx, ws.id, email, now)
    if (stale !== null) await recordExpiry(tx, events, stale, now)
    const row = await upsertPendingInvitation(tx, {
      workspaceId: ws.id,
      email,
      role,
      tokenHash,
      expiresAt,
      invitedBy: actor.kind === 'apiKey' ? null : actor.userId,
      invitedByApiKey: actor.apiKeyId,
      now
    }, sendLease)
    if (row === null) return null
    await auditPrincipalAction(events, tx, actor, {
      action: row.created ? 'invitation.created' : 'invitation.resent',
      target: { type: 'invitation', id: row.id },
      payload: { email, role },
      idempotencyKey,
      now
    })
    return row
  }, row => !row.created)
}
