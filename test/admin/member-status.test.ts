import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { suspendMember, reactivateMember } from '../../src/members/status.js'
import { systemActor } from '../../src/audit/actor.js'
import type { AuditActor } from '../../src/db/audit-events.js'

// The member-status service (src/members/status.ts), as every door calls it (REST, MCP, the
// company directory): suspension ends the member's sessions at once and keeps their role,
// reactivation restores them, the last active admin is never suspended.

const h = await build(t)
const deps = h.app.services.ports
const directory: AuditActor = { ...systemActor('directory'), type: 'api_key', id: null, source: 'api' }

async function me (h: TestApp, who: SignedIn): Promise<number> {
  return (await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: who.cookie } })).statusCode
}

async function events (h: TestApp, workspaceId: string) {
  const r = await h.db.query<{ action: string, payload: Record<string, unknown>, eventType: string | null }>(
    `SELECT action, payload, event_type AS "eventType" FROM audit_events
      WHERE workspace_id = $1 AND action LIKE 'member.%' ORDER BY id`, [workspaceId])
  return r.rows
}

t.test('suspend revokes sessions and keeps the role; reactivate restores the member', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const other = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  t.equal(await me(h, other), 200)

  const suspended = await suspendMember(deps, admin.workspaceId, other.userId, directory)
  t.match(suspended, { id: other.userId, role: 'admin', status: 'suspended' })
  t.equal(await me(h, other), 401, 'the suspended member\'s session is refused at once')
  const again = await suspendMember(deps, admin.workspaceId, other.userId, directory)
  t.equal(again.status, 'suspended', 'suspending twice changes nothing')

  const back = await reactivateMember(deps, admin.workspaceId, other.userId, directory)
  t.match(back, { id: other.userId, role: 'admin', status: 'active' }, 'the role is the one they had')
  t.equal(await me(h, other), 401, 'the old session stays ended: reactivation restores the member, not the cookie')
  await reactivateMember(deps, admin.workspaceId, other.userId, directory)

  t.match(await events(h, admin.workspaceId), [
    { action: 'member.suspended', eventType: 'member.suspended', payload: { email: other.email, role: 'admin', revokedSessions: 1 } },
    { action: 'member.reactivated', eventType: 'member.reactivated', payload: { email: other.email, role: 'admin' } }
  ])
  t.equal((await events(h, admin.workspaceId)).length, 2, 'no-op calls record nothing')
})

t.test('the last active admin is not suspended (LAST_ADMIN); a suspended admin does not count', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const second = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  await suspendMember(deps, admin.workspaceId, second.userId, directory)
  await t.rejects(suspendMember(deps, admin.workspaceId, admin.userId, directory), { code: 'LAST_ADMIN', statusCode: 409 })
  t.equal(await me(h, admin), 200, 'the last admin is untouched')
})

t.test('another workspace\'s member, or an unknown id, is NOT_FOUND; a removed acting admin is FORBIDDEN', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const stranger = await h.signIn({ role: 'member' })
  await t.rejects(suspendMember(deps, admin.workspaceId, stranger.userId, directory), { code: 'NOT_FOUND' })
  await t.rejects(reactivateMember(deps, admin.workspaceId, '00000000-0000-4000-8000-000000000000', directory),
    { code: 'NOT_FOUND' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  await t.rejects(
    suspendMember(deps, admin.workspaceId, admin.userId, directory, { actingAdminId: member.userId }),
    { code: 'FORBIDDEN' }, 'a person acting must be an active admin'
  )
})
