import { notFoundIn, type Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import { serviceError } from '../errors.js'
import { effectiveStatus, findInvitation, markInvitationRevoked } from '../db/invitations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { InvitationContext } from './context.js'
import { toInvitationView, type InvitationView } from './view.js'

/** Revoke a pending invitation here, then (best effort) at the identity provider. */
export async function revokeInvitation (
  ctx: InvitationContext,
  actor: Principal,
  invitationId: string
): Promise<InvitationView> {
  const { ports: { db, clock, log }, idp } = ctx
  const now = clock.now()
  const row = await db.transaction(async (tx: Queryable) => {
    const revoked = await markInvitationRevoked(tx, actor.workspaceId, invitationId, now)
    if (revoked === null) {
      const current = await findInvitation(tx, actor.workspaceId, invitationId)
      if (current === null) throw await notFoundIn(tx, actor.workspaceId, 'Invitation')
      throw serviceError('INVITATION_NOT_PENDING', [effectiveStatus(current, now)])
    }
    await auditPrincipalAction(ctx.ports.events, tx, actor, {
      action: 'invitation.revoked',
      target: { type: 'invitation', id: revoked.id },
      payload: { email: revoked.email },
      now
    })
    return revoked
  })
  // The provider's copy of the invitation would still let the person in: tell it (bounded,
  // best effort; our row is already revoked either way).
  if (row.idpInvitationId !== null && idp.kind !== 'none') {
    const told = await idp.revoke(row.idpInvitationId)
    if (!told) {
      log.warn({ invitationId: row.id }, 'revoking the invitation at the identity provider failed; it is revoked here')
    }
  }
  return toInvitationView(row, now)
}
