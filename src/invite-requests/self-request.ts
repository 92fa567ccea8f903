import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import type { Role } from '../db/users.js'
import { insertInviteRequest, type InviteRequestRow } from '../db/invite-requests.js'
import type { InviteRequestNotice } from './context.js'
import { decideRequestNotices } from './admin-notices.js'

// A person who proved their address asks to join (an invite link that needs approval, a verified
// domain under `suggest`): an invite request with no requesting member, for the admins to decide
// through the usual flow. Recorded in the caller's transaction; once it is committed the caller
// tells whoever tells the admins (Slack) with the returned notice; who is told how is decided here
// (admin-notices.ts).

/** Invite requests people make for themselves lapse after a week, like those members make. */
const REQUEST_TTL_MS = 7 * 86_400_000

export async function requestToJoin (
  deps: Pick<Ports, 'events' | 'jobs'>,
  tx: Queryable,
  person: { workspaceId: string, email: string, role: Role },
  door: Record<string, string>,
  now: Date
): Promise<{ row: InviteRequestRow, notice: InviteRequestNotice | null }> {
  const { row, created } = await insertInviteRequest(tx, {
    ...person, requestedBy: null, expiresAt: new Date(now.getTime() + REQUEST_TTL_MS), now
  })
  if (!created) return { row, notice: null }
  // Not a member yet: the actor is the proven address, through the web door.
  await deps.events.record(tx, {
    workspaceId: person.workspaceId,
    action: 'invite_request.created',
    actor: { type: 'system', id: null, label: person.email, source: 'web', requestId: null },
    target: { type: 'invite_request', id: row.id },
    payload: { email: person.email, role: person.role, ...door },
    now
  })
  await decideRequestNotices(deps, tx, row, now)
  return { row, notice: { kind: 'created', request: row, actor: null } }
}
