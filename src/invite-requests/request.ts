import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import type { Role } from '../db/users.js'
import { refuseMemberAddress } from '../members/status.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { emailAddress } from '../lib/email.js'
import {
  findPendingInviteRequest, insertInviteRequest, lockAndCountOpenRequests, type InviteRequestRow
} from '../db/invite-requests.js'
import { requireMayRequest } from '../workspaces/invite-policy.js'
import type { InviteRequestDeps } from './context.js'
import { decideRequestNotices } from './admin-notices.js'

/** Requests lapse after a week, like invitations by default. */
const REQUEST_TTL_MS = 7 * 86_400_000

/** A member asks; the pending request this e-mail already has is returned as it is. */
export async function requestInvite (
  deps: InviteRequestDeps,
  actor: Principal,
  input: { email: string, role: Role }
): Promise<{ row: InviteRequestRow, created: boolean }> {
  const { db, clock } = deps
  await requireMayRequest(db, actor, input.role)
  const email = emailAddress(input.email)
  await refuseMemberAddress(db, actor.workspaceId, email)
  const now = clock.now()
  const cap = deps.config.inviteRequestsPerMember
  const result = await db.transaction(async tx => {
    // Each new request messages every admin: one member's open requests are capped.
    const open = await lockAndCountOpenRequests(
      tx, { workspaceId: actor.workspaceId, requestedBy: actor.userId, now }
    )
    if (open >= cap) {
      // Asking again for an address already asked for is not a new request.
      const existing = await findPendingInviteRequest(tx, { workspaceId: actor.workspaceId, email, now })
      if (existing !== null) return { row: existing, created: false }
      deps.log.warn(
        { workspaceId: actor.workspaceId, userId: actor.userId, open },
        'invite request refused: the member has INVITE_REQUESTS_PER_MEMBER pending requests'
      )
      throw serviceError('INVITE_REQUEST_LIMIT_REACHED', [String(cap)])
    }
    const inserted = await insertInviteRequest(tx, {
      workspaceId: actor.workspaceId,
      email,
      role: input.role,
      requestedBy: actor.userId,
      expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
      now
    })
    if (inserted.created) {
      await auditPrincipalAction(deps.events, tx, actor, {
        action: 'invite_request.created',
        target: { type: 'invite_request', id: inserted.row.id },
        payload: { email, role: input.role },
        now
      })
      await decideRequestNotices(deps, tx, inserted.row, now)
    }
    return inserted
  })
  if (result.created) deps.notify({ kind: 'created', request: result.row, actor })
  return result
}
