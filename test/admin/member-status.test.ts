import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { suspendMember, reactivateMember } from '../../src/members/status.js'
import { systemActor } from '../../src/audit/actor.js'
import { assertContract } from '../helpers/contract.js'
import type { AuditActor } from '../../src/db/audit-events.js'
import { insertLoginTokenWithinLimit } from '../../src/db/login-tokens.js'
import { hashToken, randomToken } from '../../src/lib/tokens.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'

// The member-status service (src/members/status.ts), as every door calls it (REST, MCP, the
// company directory): suspension ends the member's sessions at once and keeps their role,
// reactivation restores them, the last active admin is never suspended, and a sign-in racing a
// suspension neither deadlocks with it nor keeps its session (PostgreSQL).

// Two instances share a database and the session secret, as in production.
const env = { SESSION_SECRET: 'member-status-two-instances-'.repeat(2) }
const h = await build(t, { env })
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

async function post (app: TestApp, url: string, headers: Record<string, string>, payload?: Record<string, unknown>) {
  if (payload === undefined) return await app.inject({ method: 'POST', url, headers })
  return await app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload })
}

t.test('REST: suspend on one instance is refused on the other at once; keys come back on reactivation', async t => {
  const other = await build(t, { db: h.db, clock: h.clock, env }) // a second instance on the same database
  const admin = await h.signIn({ role: 'admin' })
  const second = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const keyRes = await post(h, '/api/api-keys', { cookie: second.cookie }, { name: 'script', scopes: ['members:read'] })
  t.equal(keyRes.statusCode, 201)
  const bearer = { authorization: `Bearer ${(keyRes.json() as { secret: string }).secret}` }
  const listWithKey = async () => (await other.inject({ method: 'GET', url: '/api/users', headers: bearer })).statusCode
  t.equal(await listWithKey(), 200)
  t.equal((await other.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: second.cookie } })).statusCode, 200)

  const url = `/api/users/${second.userId}/suspend`
  const res = await post(h, url, { cookie: admin.cookie })
  t.equal(res.statusCode, 200)
  assertContract(t, 'POST', url, res)
  t.match(res.json(), { id: second.userId, role: 'admin', status: 'suspended' })
  t.equal((await other.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: second.cookie } })).statusCode,
    401, 'the other instance refuses the session at once')
  t.equal(await listWithKey(), 401, 'their key is refused while suspended')

  const listed = await h.inject({ method: 'GET', url: '/api/users?status=suspended', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/users', listed)
  t.same((listed.json() as { items: Array<{ id: string }> }).items.map(u => u.id), [second.userId])

  const last = await post(h, `/api/users/${admin.userId}/suspend`, { cookie: admin.cookie })
  t.equal(last.statusCode, 409)
  t.equal(last.json().code, 'LAST_ADMIN')
  assertContract(t, 'POST', `/api/users/${admin.userId}/suspend`, last)

  const invite = await post(h, '/api/users/invite', { cookie: admin.cookie }, { email: second.email, role: 'member' })
  t.equal(invite.statusCode, 409)
  t.equal(invite.json().code, 'MEMBER_SUSPENDED', 'inviting a suspended member says so')
  assertContract(t, 'POST', '/api/users/invite', invite)

  const back = await post(other, `/api/users/${second.userId}/reactivate`, { cookie: admin.cookie })
  t.equal(back.statusCode, 200)
  assertContract(t, 'POST', `/api/users/${second.userId}/reactivate`, back)
  t.match(back.json(), { role: 'admin', status: 'active' })
  t.equal(await listWithKey(), 200, 'their key works again after reactivation')
})

t.test('a sign-in racing a suspension: the session it starts ends with the others', {
  skip: h.db.kind === 'pglite' ? 'PGlite has one connection: two transactions never interleave there' : false
}, async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  // A sign-in link, e-mailed before the suspension (as /api/auth/login-link stores it).
  const token = randomToken()
  const now = h.clock.now()
  await insertLoginTokenWithinLimit(h.db, {
    userId: member.userId,
    tokenHash: hashToken(token),
    browserHash: null,
    expiresAt: new Date(now.getTime() + 600_000),
    now,
    since: now,
    max: 10
  })
  // Another connection holds the sessions table, so the sign-in stops where it inserts its session,
  // its link used; then the suspension starts. Before the fix the suspension locked the member,
  // revoked their sessions (not the uncommitted one) and waited for the link's row while the sign-in
  // waited for the member's row: a deadlock, one of them answered 500. Now the sign-in holds the
  // member's row from the start: the suspension waits for it, then ends its session too.
  let release = (): void => {}
  const released = new Promise<void>(resolve => { release = resolve })
  let locked = (): void => {}
  const holding = new Promise<void>(resolve => { locked = resolve })
  const holder = h.db.transaction(async tx => {
    await tx.query('LOCK TABLE sessions IN SHARE MODE')
    locked()
    await released
  })
  await holding
  // Connections of this test's database waiting for a lock (each test file has a database of its own).
  const waiting = async () => (await h.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
  )).rows[0]?.n ?? 0
  const waitFor = async (n: number) => {
    while (await waiting() < n) await new Promise(resolve => setImmediate(resolve))
  }

  const signIn = post(h, '/api/auth/verify', {}, { token })
  await waitFor(1)
  const suspended = post(h, `/api/users/${member.userId}/suspend`, { cookie: admin.cookie })
  await waitFor(2)
  release()
  await holder
  const [verified, suspension] = await Promise.all([signIn, suspended])
  t.equal(suspension.statusCode, 200)
  const cookie = verified.cookies.find(c => c.name === SESSION_COOKIE)
  t.equal(verified.statusCode, 200, 'the sign-in began first and was let finish')
  t.equal((await post(h, `/api/users/${member.userId}/reactivate`, { cookie: admin.cookie })).statusCode, 200)
  t.equal((await h.inject({
    method: 'GET', url: '/api/users/me', headers: { cookie: `${SESSION_COOKIE}=${cookie?.value ?? ''}` }
  })).statusCode, 401, 'its session was ended by the suspension and stays ended after reactivation')
})
