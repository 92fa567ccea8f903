import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// Admin operations on members: PATCH /api/users/{userId} (role) and DELETE /api/users/{userId}
// (remove), through the real app. Effects are checked on the affected person's next request.

const AUDIT = '/api/audit-events'

// One app for the file (a build costs seconds); every test works in workspaces of its own.
const h = await build(t)

async function patchRole (h: TestApp, who: SignedIn, userId: string, role: string) {
  const url = `/api/users/${userId}`
  const res = await h.inject({ method: 'PATCH', url, headers: { cookie: who.cookie }, payload: { role } })
  return { res, url, method: 'PATCH' }
}

async function remove (h: TestApp, who: SignedIn, userId: string) {
  const url = `/api/users/${userId}`
  const res = await h.inject({ method: 'DELETE', url, headers: { cookie: who.cookie } })
  return { res, url, method: 'DELETE' }
}

/** An admin-only request as this person: 200 for an admin, 403 for a member, 401 without a session. */
async function adminProbe (h: TestApp, who: SignedIn): Promise<number> {
  const res = await h.inject({ method: 'GET', url: AUDIT, headers: { cookie: who.cookie } })
  return res.statusCode
}

async function userRow (h: TestApp, id: string) {
  const r = await h.db.query<{ role: string, status: string }>('SELECT role, status FROM users WHERE id = $1', [id])
  return r.rows[0]
}

async function activeAdmins (h: TestApp, workspaceId: string): Promise<number> {
  const r = await h.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM users WHERE workspace_id = $1 AND role = 'admin' AND status = 'active'",
    [workspaceId]
  )
  return r.rows[0]?.n ?? -1
}

t.test('role changes take effect on the affected person\'s next request', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })

  t.equal(await adminProbe(h, member), 403, 'a member may not read the audit trail')
  const promoted = await patchRole(h, admin, member.userId, 'admin')
  t.equal(promoted.res.statusCode, 200)
  assertContract(t, 'PATCH', promoted.url, promoted.res)
  t.match(promoted.res.json(), { id: member.userId, email: member.email, name: null, role: 'admin' })
  t.equal(await adminProbe(h, member), 200, 'promoted: the same session now passes the admin check')
  const users = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: member.cookie } })
  t.equal(users.statusCode, 200, 'promoted member can call GET /api/users')
  assertContract(t, 'GET', '/api/users', users)

  // Now the former member demotes the original admin: 403 on that admin's next request.
  const demoted = await patchRole(h, member, admin.userId, 'member')
  t.equal(demoted.res.statusCode, 200)
  assertContract(t, 'PATCH', demoted.url, demoted.res)
  t.equal(demoted.res.json().role, 'member')
  t.equal(await adminProbe(h, admin), 403, 'demoted admin is refused at once')
  const again = await patchRole(h, admin, member.userId, 'member')
  t.equal(again.res.statusCode, 403, 'a demoted admin can no longer change roles')
  assertContract(t, 'PATCH', again.url, again.res)
  const refused = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: admin.cookie } })
  t.equal(refused.statusCode, 403, 'demoted admin gets 403 on GET /api/users')
  t.equal((await userRow(h, admin.userId))?.role, 'member')
})

t.test('setting the role a member already has changes nothing and records nothing', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const { res, url } = await patchRole(h, admin, member.userId, 'member')
  t.equal(res.statusCode, 200)
  assertContract(t, 'PATCH', url, res)
  t.equal(res.json().role, 'member')
  const events = await h.db.query('SELECT 1 FROM audit_events WHERE workspace_id = $1', [admin.workspaceId])
  t.equal(events.rows.length, 0)
})

t.test('removing a member ends their session, frees their e-mail, and is final', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const other = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  t.equal(await adminProbe(h, member), 403, 'signed in before removal (403, not 401)')

  const { res, url } = await remove(h, admin, member.userId)
  t.equal(res.statusCode, 204)
  t.equal(res.body, '')
  assertContract(t, 'DELETE', url, res)

  t.equal(await adminProbe(h, member), 401, 'the removed member\'s next request is unauthenticated')
  t.equal(await adminProbe(h, other), 403, 'other members keep their sessions')
  t.same(await userRow(h, member.userId), { role: 'member', status: 'removed' })
  const sessions = await h.db.query<{ revoked: boolean }>(
    'SELECT revoked_at IS NOT NULL AS revoked FROM sessions WHERE user_id = $1', [member.userId]
  )
  t.same(sessions.rows, [{ revoked: true }], 'the session row is revoked, not only hidden by the status')

  const twice = await remove(h, admin, member.userId)
  t.equal(twice.res.statusCode, 404, 'a removed member is gone: DELETE again → 404')
  assertContract(t, 'DELETE', twice.url, twice.res)
  const patch = await patchRole(h, admin, member.userId, 'admin')
  t.equal(patch.res.statusCode, 404, 'and PATCH → 404')
  t.equal(patch.res.json().code, 'NOT_FOUND')
  assertContract(t, 'PATCH', patch.url, patch.res)

  // The unique e-mail index excludes removed users: the address can hold a user again.
  const inv = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie },
    payload: { email: member.email, role: 'member' }
  })
  t.equal(inv.statusCode, 200, 'the removed e-mail can be invited again')
  assertContract(t, 'POST', '/api/users/invite', inv)
  const back = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: member.email })
  t.not(back.userId, member.userId, 'a new user row holds the e-mail again')
  t.equal(await adminProbe(h, back), 403)
  t.equal(await adminProbe(h, member), 401, 'the old session stays dead')
})

t.test('removing an admin revokes the API keys they created, in the same transaction', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const leaving = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  // Rows as the API-key feature writes them; the REST round trip is tested below.
  const insertKey = async (createdBy: string, prefix: string) => {
    const r = await h.db.query<{ id: string }>(
      `INSERT INTO api_keys (workspace_id, created_by, name, prefix, secret_hash, created_at, scopes)
       VALUES ($1, $2, $3, $4, $5, $6, ARRAY['invitations:read']) RETURNING id`,
      [admin.workspaceId, createdBy, 'k', prefix, 'x'.repeat(64), h.clock.now()])
    return (r.rows[0] as { id: string }).id
  }
  const theirs = await insertKey(leaving.userId, `t${Date.now()}a`)
  const kept = await insertKey(admin.userId, `t${Date.now()}b`)
  const { res, url } = await remove(h, admin, leaving.userId)
  t.equal(res.statusCode, 204)
  assertContract(t, 'DELETE', url, res)
  const keys = await h.db.query<{ id: string, revoked: boolean }>(
    'SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE workspace_id = $1 ORDER BY prefix',
    [admin.workspaceId]
  )
  t.same(keys.rows, [{ id: theirs, revoked: true }, { id: kept, revoked: false }])
})

t.test('API keys created by a removed admin stop working at once (REST round trip)', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const leaving = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const created = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: leaving.cookie },
    payload: { name: 'assistant', scopes: ALL_SCOPES }
  })
  t.equal(created.statusCode, 201, 'key created')
  assertContract(t, 'POST', '/api/api-keys', created)
  const secret = created.json().secret as string
  const mcp = async () => await h.inject({
    method: 'POST',
    url: '/api/mcp',
    headers: {
      authorization: `Bearer ${secret}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json'
    },
    payload: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'test', version: '1' } }
    }
  })
  const before = await mcp()
  t.equal(before.statusCode, 200, 'the key works before removal')
  t.equal((await remove(h, admin, leaving.userId)).res.statusCode, 204)
  const after = await mcp()
  t.equal(after.statusCode, 401, 'the key is refused after removal')
  assertContract(t, 'POST', '/api/mcp', after)
  const list = await h.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie: admin.cookie } })
  t.equal(list.statusCode, 200)
  assertContract(t, 'GET', '/api/api-keys', list)
  t.same(list.json().items, [], 'the removed admin\'s key is revoked, not only refused')
})

t.test('the last active admin can be neither demoted nor removed', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })

  const demote = await patchRole(h, admin, admin.userId, 'member')
  t.equal(demote.res.statusCode, 409)
  t.equal(demote.res.json().code, 'LAST_ADMIN')
  assertContract(t, 'PATCH', demote.url, demote.res)
  const del = await remove(h, admin, admin.userId)
  t.equal(del.res.statusCode, 409)
  t.equal(del.res.json().code, 'LAST_ADMIN')
  assertContract(t, 'DELETE', del.url, del.res)

  // A disabled admin does not count: they cannot act, so the rule still holds.
  const disabled = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  await h.db.query("UPDATE users SET status = 'suspended', suspended_at = now() WHERE id = $1", [disabled.userId])
  t.equal(
    (await patchRole(h, admin, admin.userId, 'member')).res.statusCode, 409, 'a disabled second admin does not help'
  )
  t.equal((await remove(h, admin, disabled.userId)).res.statusCode, 204, 'the disabled admin can be removed')

  // With a second active admin, either may step down; then the other is the last one.
  t.equal((await patchRole(h, admin, member.userId, 'admin')).res.statusCode, 200)
  t.equal(
    (await patchRole(h, admin, admin.userId, 'member')).res.statusCode, 200,
    'self-demotion allowed while another admin remains'
  )
  t.equal((await remove(h, member, member.userId)).res.statusCode, 409, 'now the promoted member is the last admin')
  t.equal(await activeAdmins(h, admin.workspaceId), 1)
  const events = await h.db.query('SELECT 1 FROM audit_events WHERE workspace_id = $1', [admin.workspaceId])
  t.equal(events.rows.length, 3, 'refused changes record no event (remove, promote, demote only)')
})

t.test('concurrent changes always leave at least one active admin', async t => {
  for (let i = 0; i < 6; i++) {
    const a = await h.signIn({ role: 'admin' })
    const b = await h.signIn({ role: 'admin', workspaceId: a.workspaceId })
    // Alternate the shapes of the race: demote each other, demote oneself, remove each other.
    const [ra, rb] = i % 3 === 0
      ? await Promise.all([patchRole(h, a, b.userId, 'member'), patchRole(h, b, a.userId, 'member')])
      : i % 3 === 1
        ? await Promise.all([patchRole(h, a, a.userId, 'member'), patchRole(h, b, b.userId, 'member')])
        : await Promise.all([remove(h, a, b.userId), remove(h, b, a.userId)])
    const codes = [ra.res.statusCode, rb.res.statusCode].sort()
    t.equal(
      codes.filter(c => c === 200 || c === 204).length, 1, `race ${i}: exactly one change wins (${codes.join(', ')})`
    )
    // The loser is refused by the rule (LAST_ADMIN) or, when the winner's change committed before
    // the loser's request was checked, as no longer an admin (FORBIDDEN) or, removed before its
    // session was read, as nobody (UNAUTHENTICATED).
    const why = i % 3 === 2 ? /^(LAST_ADMIN|FORBIDDEN|UNAUTHENTICATED)$/ : /^(LAST_ADMIN|FORBIDDEN)$/
    for (const r of [ra, rb]) {
      assertContract(t, r.method, r.url, r.res)
      if (r.res.statusCode >= 400) t.match(r.res.json().code, why, 'the loser is told why')
    }
    t.equal(await activeAdmins(h, a.workspaceId), 1, `race ${i}: one active admin remains`)
  }
})

t.test('another workspace\'s members are invisible: 404 for PATCH and DELETE', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const stranger = await h.signIn({ role: 'member', workspaceName: 'Elsewhere' })
  const strangerAdmin = await h.signIn({ role: 'admin', workspaceId: stranger.workspaceId })
  for (const r of [
    await patchRole(h, admin, stranger.userId, 'admin'), await remove(h, admin, stranger.userId),
    await remove(h, admin, strangerAdmin.userId)
  ]) {
    t.equal(r.res.statusCode, 404)
    t.equal(r.res.json().code, 'NOT_FOUND')
    t.equal(r.res.json().message, 'User not found', 'the same answer as for an id that does not exist')
    assertContract(t, r.method, r.url, r.res)
  }
  t.same(await userRow(h, stranger.userId), { role: 'member', status: 'active' }, 'untouched')
  t.equal(await adminProbe(h, strangerAdmin), 200, 'the other workspace\'s admin keeps their session')
  const unknown = await remove(h, admin, '00000000-0000-4000-8000-000000000000')
  t.equal(unknown.res.statusCode, 404)
  assertContract(t, 'DELETE', unknown.url, unknown.res)
})

t.test('authentication, authorization and validation', async t => {
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const url = `/api/users/${admin.userId}`

  const anon = await h.inject({ method: 'DELETE', url })
  t.equal(anon.statusCode, 401)
  assertContract(t, 'DELETE', url, anon)
  const byMember = await patchRole(h, member, admin.userId, 'member')
  t.equal(byMember.res.statusCode, 403)
  t.equal(byMember.res.json().code, 'FORBIDDEN')
  assertContract(t, 'PATCH', byMember.url, byMember.res)
  const delByMember = await remove(h, member, admin.userId)
  t.equal(delByMember.res.statusCode, 403)
  assertContract(t, 'DELETE', delByMember.url, delByMember.res)

  const badRole = await patchRole(h, admin, member.userId, 'owner')
  t.equal(badRole.res.statusCode, 400)
  t.equal(badRole.res.json().code, 'VALIDATION_FAILED')
  assertContract(t, 'PATCH', badRole.url, badRole.res)
  const extra = await h.inject({
    method: 'PATCH',
    url: `/api/users/${member.userId}`,
    headers: { cookie: admin.cookie },
    payload: { role: 'admin', status: 'active' }
  })
  t.equal(extra.statusCode, 400, 'unknown fields are refused')
  assertContract(t, 'PATCH', `/api/users/${member.userId}`, extra)
  const badId = await h.inject({ method: 'DELETE', url: '/api/users/not-a-uuid', headers: { cookie: admin.cookie } })
  t.equal(badId.statusCode, 400)
  assertContract(t, 'DELETE', '/api/users/not-a-uuid', badId)
  const text = await h.inject({
    method: 'PATCH',
    url,
    headers: { cookie: admin.cookie, 'content-type': 'text/plain' },
    payload: 'role=member'
  })
  t.equal(text.statusCode, 415)
  assertContract(t, 'PATCH', url, text)
  t.same(await userRow(h, member.userId), { role: 'member', status: 'active' }, 'nothing changed')
})
