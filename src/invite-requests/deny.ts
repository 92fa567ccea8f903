import type { Principal } from '../principal.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { isUuid } from '../lib/uuid.js'
import { decideInviteRequest } from '../db/invite-requests.js'
import {
  inviteRequestView, notPending, type InviteRequestDeps, type InviteRequestView
} from './context.js'
import { requireAdmin } from '../lib/require-admin.js'

/** An admin denies, with an optional reason the requester sees; decided and audited in one transaction. */
export async function denyInviteRequest (
  deps: InviteRequestDeps,
  actor: Principal,
  requestId: string,
  input: { reason?: string }
): Promise<InviteRequestView> {
  requireAdmin(actor)
  if (!isUuid(requestId)) return await notPending(deps, actor, requestId)
  const reason = input.reason?.trim() ?? ''
  const now = deps.clock.now()
  const denied = await deps.db.transaction(async tx => {
    const row = await decideInviteRequest(tx, {
      workspaceId: actor.workspaceId,
      id: requestId,
      status: 'denied',
      role: null,
      decidedBy: actor.userId,
      reason: reason === '' ? null : reason,
      now
    })
    if (row === null) return null
    await auditPrincipalAction(deps.events, tx, actor, {
      action: 'invite_request.denied',
      target: { type: 'invite_request', id: row.id },
      // No reason given: none in the payload (the event's `reason` is a string when present).
      payload: { email: row.email, role: row.role, ...(row.reason !== null ? { reason: row.reason } : {}) },
      now
    })
    return row
  })
  if (denied === null) return await notPending(deps, actor, requestId)
  deps.notify({ kind: 'denied', request: denied, actor })
  return inviteRequestView(deps, denied)
}
