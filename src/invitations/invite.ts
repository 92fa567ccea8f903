import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { findUserByEmail, type Role } from '../db/users.js'
import { expireStalePendingInvitation, upsertPendingInvitation } from '../db/invitations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { InviteResult } from './delivery.js'
import { rotateAndSend, type InvitationContext } from './context.js'

/** Invite (or re-invite) a normalized e-mail into the actor's workspace, and send it. */
export async function inviteMember (
  ctx: InvitationContext, actor: Principal, email: string, role: Role
): Promise<InviteResult> {
  // A retry of a failed send re-sends the same pending invitation; the upsert takes the lease.
  return await rotateAndSend(ctx, actor, async (tx, { ws, tokenHash, expiresAt, sendLease, now }) => {
    if (await findUserByEmail(tx, email) !== null) throw serviceError('USER_EXISTS')
    await expireStalePendingInvitation(tx, ws.id, email, now)
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
    await auditPrincipalAction(tx, actor, {
      action: row.created ? 'invitation.created' : 'invitation.resent',
      target: { type: 'invitation', id: row.id },
      payload: { email, role },
      now
    })
    return row
  }, row => !row.created)
}
