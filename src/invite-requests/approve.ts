import type { Principal } from '../principal.js'
import type { InviteResult } from '../invitations/delivery.js'
import type { Role } from '../db/users.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { isUuid } from '../lib/uuid.js'
import { decideInviteRequest, reopenInviteRequest } from '../db/invite-requests.js'
import {
  inviteRequestView, notPending, type InviteRequestDeps, type InviteRequestView
} from './context.js'
import { requireAdmin } from '../lib/require-admin.js'

/**
 * An admin approves: the invitation is sent in the admin's name, or the request is pending again.
 * It grants the role the approving admin names, and `member` when they name none: what the
 * requester asked for is a wish, never a grant (an empty approval of "invite X as admin" would
 * otherwise make an admin nobody chose).
 */
export async function approveInviteRequest (
  deps: InviteRequestDeps,
  actor: Principal,
  requestId: string,
  input: { role?: Role }
): Promise<{ request: InviteRequestView, invitation: InviteResult }> {
  const { db, clock } = deps
  requireAdmin(actor)
  // REST checks the id's format; Slack's button values and MCP arguments are checked here.
  if (!isUuid(requestId)) return await notPending(deps, actor, requestId)
  // The claim: of concurrent approvals (and denials) exactly one gets the row.
  const claimed = await decideInviteRequest(db, {
    workspaceId: actor.workspaceId,
    id: requestId,
    status: 'approved',
    role: input.role ?? 'member',
    decidedBy: actor.userId,
    reason: null,
    now: clock.now()
  })
  if (claimed === null) return await notPending(deps, actor, requestId)
  let invitation: InviteResult
  try {
    invitation = await deps.invitations.invite(actor, { email: claimed.email, role: claimed.role })
  } catch (err) {
    // No invitation was made (the person joined meanwhile, the budget ran out, the send
    // failed): the request is pending again, to be approved again or denied.
    await reopenInviteRequest(db, claimed.id, clock.now())
    throw err
  }
  const now = clock.now()
  await auditPrincipalAction(deps.events, db, actor, {
    action: 'invite_request.approved',
    target: { type: 'invite_request', id: claimed.id },
    payload: { email: claimed.email, role: claimed.role },
    now
  })
  deps.notify({ kind: 'approved', request: claimed, actor })
  return { request: inviteRequestView(deps, claimed), invitation }
}
