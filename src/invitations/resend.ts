import { notFoundIn, requireAdminScope, type Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { refuseMemberAddress } from '../members/status.js'
import { effectiveStatus, findInvitation, refreshInvitationToken, takeSendLease } from '../db/invitations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { InviteResult } from './delivery.js'
import { rotateAndSend, type InvitationContext } from './context.js'

/** Fresh token and expiry for a pending invitation of the actor's workspace, and send it again. */
export async function resendInvitation (
  ctx: InvitationContext, actor: Principal, invitationId: string
): Promise<InviteResult> {
  return await rotateAndSend(ctx, actor, async (tx, { ws, tokenHash, expiresAt, sendLease, now }) => {
    const current = await findInvitation(tx, ws.id, invitationId)
    if (current === null) throw await notFoundIn(tx, ws.id, 'Invitation')
    // A fresh link for an admin's invitation makes an admin: a key needs members:admin.
    if (current.role === 'admin') requireAdminScope(actor)
    const status = effectiveStatus(current, now)
    if (status !== 'pending') throw serviceError('INVITATION_NOT_PENDING', [status])
    await refuseMemberAddress(tx, ws.id, current.email)
    if (!await takeSendLease(tx, current.id, sendLease, now)) return 'busy'
    const row = await refreshInvitationToken(tx, current.id, tokenHash, expiresAt, now)
    // Accepted or revoked between the read and the update.
    if (row === null) throw serviceError('INVITATION_NOT_PENDING', ['no longer'])
    await auditPrincipalAction(ctx.ports.events, tx, actor, {
      action: 'invitation.resent',
      target: { type: 'invitation', id: row.id },
      payload: { email: row.email, role: row.role },
      now
    })
    return row
  }, () => true)
}
