import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { assertLimited } from '../helpers/rate-limit.js'
import { createApiKey } from '../helpers/mcp.js'

// GET /api/workspace: the caller's workspace for any member (cookie) or an API key of it. API-key
// callers draw on their per-key budget (api-key-only); cookie callers are not limited.

const URL = '/api/workspace'

t.test('any member, by cookie or API key, sees its own workspace; nobody else does', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  await h.signIn({ role: 'admin', workspaceName: 'Elsewhere' })
  const key = (await createApiKey(h, admin)).secret

  const byMember = await h.inject({ url: URL, headers: { cookie: member.cookie } })
  t.equal(byMember.statusCode, 200, 'a member (no admin role needed)')
  assertContract(t, 'GET', URL, byMember)
  t.match(byMember.json(), { id: admin.workspaceId, name: 'Acme', memberCount: 2, invitePolicy: 'admins' })
  t.ok(!Number.isNaN(Date.parse(byMember.json().createdAt)), 'createdAt is a date')

  const byKey = await h.inject({ url: URL, headers: { authorization: `Bearer ${key}` } })
  t.equal(byKey.statusCode, 200, 'an API key of the workspace')
  assertContract(t, 'GET', URL, byKey)
  t.same(byKey.json(), byMember.json(), 'the same summary through either door')

  // The count is the member list's: a removed member no longer counts.
  const removed = await h.inject({ method: 'DELETE', url: `/api/users/${member.userId}`, headers: { cookie: admin.cookie } })
  t.equal(removed.statusCode, 204)
  const policy = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: 'request' }
  })
  t.equal(policy.statusCode, 200)
  const after = await h.inject({ url: URL, headers: { cookie: admin.cookie } })
  t.match(after.json(), { memberCount: 1, invitePolicy: 'request' }, 'count and policy as they are now')

  for (const headers of [{}, { authorization: 'Bearer wsk_not-a-key' }, { cookie: member.cookie }]) {
    const res = await h.inject({ url: URL, headers })
    t.equal(res.statusCode, 401, `refused: ${Object.keys(headers).join('') || 'no credentials'}`)
    assertContract(t, 'GET', URL, res)
  }

  await h.db.query('DELETE FROM workspaces WHERE id = $1', [admin.workspaceId])
  const gone = await h.inject({ url: URL, headers: { authorization: `Bearer ${key}` } })
  t.equal(gone.statusCode, 401, 'a deleted workspace: 401, never 404')
})

t.test('API keys are limited per key; cookie callers are not counted', async t => {
  const h = await build(t, { env: { API_KEY_REST_RATE_LIMIT_PER_MINUTE: '3' } })
  const admin = await h.signIn({ role: 'admin' })
  const key = (await createApiKey(h, admin)).secret
  for (let i = 0; i < 3; i++) {
    t.equal((await h.inject({ url: URL, headers: { authorization: `Bearer ${key}` } })).statusCode, 200)
  }
  assertLimited(t, await h.inject({ url: URL, headers: { authorization: `Bearer ${key}` } }), 'GET', URL, 3)
  const byCookie = new Set<number>()
  for (let i = 0; i < 5; i++) byCookie.add((await h.inject({ url: URL, headers: { cookie: admin.cookie } })).statusCode)
  t.same([...byCookie], [200], 'the cookie: never counted, never refused')
})
