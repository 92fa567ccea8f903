import type { Ports } from '../ports/index.js'
import type { Principal } from '../principal.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { isUuid } from '../lib/uuid.js'
import { findInviteRequest, listInviteRequests, type InviteRequestStatus } from '../db/invite-requests.js'
import { inviteRequestView, type InviteRequestView } from './context.js'

export interface InviteRequestListQuery {
  status?: InviteRequestStatus
  mine?: boolean
  limit: number
  cursor?: string
}

/** One page of the workspace's requests, newest first: an admin's all (or their own), a member's own. */
export async function listInviteRequestPage (
  deps: Pick<Ports, 'db' | 'clock'>,
  actor: Principal,
  q: InviteRequestListQuery
): Promise<{ items: InviteRequestView[], nextCursor: string | null }> {
  const now = deps.clock.now()
  const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
  // Members see only their own requests (App Home); the REST operation is for admins.
  const requestedBy = q.mine === true || actor.role !== 'admin' ? actor.userId : undefined
  const rows = await listInviteRequests(
    deps.db, { workspaceId: actor.workspaceId, status: q.status, requestedBy, now, limit: q.limit + 1, before }
  )
  const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: new Date(r.createdAt), id: r.id }))
  return { items: page.map(row => inviteRequestView(deps, row)), nextCursor }
}

/** One request of the actor's workspace, or null. */
export async function findInviteRequestView (
  deps: Pick<Ports, 'db' | 'clock'>,
  actor: Principal,
  requestId: string
): Promise<InviteRequestView | null> {
  if (!isUuid(requestId)) return null
  const row = await findInviteRequest(deps.db, actor.workspaceId, requestId)
  return row === null ? null : inviteRequestView(deps, row)
}
