import type { Ports } from '../ports/index.js'
import type { SessionService } from '../sessions/service.js'
import type { AuditActor } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import { insertUser, type Role } from '../db/users.js'
import { loadMe, type Me } from './directory.js'

// A person who proved their address joins without an invitation (an invite link, a verified
// domain): the member, their session, and the two events every such join records, in the
// caller's transaction. `door` names the way in, in member.joined's data (inviteLinkId, or
// domain and domainId).

export interface Joined { kind: 'joined', me: Me, token: string }

export async function joinAsMember (
  deps: Pick<Ports, 'events'> & { sessions: SessionService },
  tx: Queryable,
  person: { workspaceId: string, email: string, name: string | null, role: Role },
  door: Record<string, string>,
  now: Date
): Promise<Joined> {
  const user = await insertUser(tx, { ...person, now })
  const session = await deps.sessions.start(tx, user.id, 'signup')
  const actor: AuditActor = { type: 'user', id: user.id, label: user.email, source: 'web', requestId: null }
  const by = { workspaceId: person.workspaceId, actor, now }
  await deps.events.record(tx, {
    ...by,
    action: 'member.joined',
    target: { type: 'user', id: user.id },
    payload: { email: user.email, role: person.role, ...door }
  })
  await deps.events.record(tx, {
    ...by, action: 'session.login', target: { type: 'session', id: session.sessionId }, payload: { method: 'signup' }
  })
  return { kind: 'joined', me: await loadMe(tx, person.workspaceId, user.id), token: session.token }
}
