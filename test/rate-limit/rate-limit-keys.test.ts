import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, testConfig, type TestApp } from '../helpers/build.js'
import { isScimError, scimFixture } from '../helpers/scim.js'
import { assertContract } from '../helpers/contract.js'
import { assertLimited } from '../helpers/rate-limit.js'
import { createApiKey, MCP, MCP_ACCEPT, mcpRequest as mcpCall } from '../helpers/mcp.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// What each rate limit counts: a JSON-RPC batch once per message, IPv6 clients per /64, one budget
// for all public auth operations, at most API_KEYS_PER_WORKSPACE keys (each with its limit), and a
// directory's SCIM requests apart from the REST budget.

const PREVIEW = '/api/auth/invitation'

const batchOf = (
  n: number,
  start = 0
) => Array.from(
  { length: n },
  (_, i) => ({
    jsonrpc: '2.0',
    id: start + i,
    method: 'tools/call',
    params: { name: 'list_invitations', arguments: {} }
  })
)
const mcpBatch = async (h: TestApp, key: string, payload: unknown[]) => await h.inject({
  method: 'POST',
  url: MCP,
  headers: {
    authorization: `Bearer ${key}`,
    'content-type': 'application/json',
    accept: MCP_ACCEPT
  },
  payload: JSON.stringify(payload)
})

t.test('a JSON-RPC batch counts once per message; an empty batch is a JSON-RPC error', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const key = (await createApiKey(h, admin)).secret

  const full = await mcpBatch(h, key, batchOf(100))
  t.equal(full.statusCode, 200, 'a batch of 100 calls fits the budget of 100')
  t.equal((full.json() as unknown[]).length, 100, 'and is answered in full')
  assertLimited(t, await mcpCall(h, key), 'POST', MCP, 100)

  const other = (await createApiKey(h, admin)).secret
  t.equal((await mcpBatch(h, other, batchOf(60))).statusCode, 200)
  const over = await mcpBatch(h, other, batchOf(50, 100))
  assertLimited(t, over, 'POST', MCP, 100)

  const third = (await createApiKey(h, admin)).secret
  const empty = await mcpBatch(h, third, [])
  t.equal(empty.statusCode, 400, 'an empty batch is refused')
  t.match(
    empty.json(), { code: 'VALIDATION_FAILED', details: { jsonrpc: { code: -32600 } } },
    'with the JSON-RPC error Invalid Request'
  )
  assertContract(t, 'POST', MCP, empty)
})

t.test('IPv6 clients are keyed by their /64 (configurable); IPv4-mapped IPv6 as IPv4', async t => {
  const limit = 3
  const preview = async (h: TestApp, remoteAddress: string) =>
    await h.inject({
      method: 'POST',
      url: PREVIEW,
      headers: { 'content-type': 'application/json' },
      payload: { token: 'not-a-real-token' },
      remoteAddress
    })

  const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: String(limit) } })
  for (let i = 1; i <= limit; i++) t.not((await preview(h, `2001:db8:1:2::${i.toString(16)}`)).statusCode, 429)
  assertLimited(t, await preview(h, '2001:db8:1:2:ffff:ffff:ffff:ffff'), 'POST', PREVIEW, limit)
  t.not((await preview(h, '2001:db8:1:3::1')).statusCode, 429, 'the next /64 has its own budget')

  for (let i = 1; i <= limit; i++) t.not((await preview(h, '198.51.100.7')).statusCode, 429)
  t.equal((await preview(h, '::ffff:198.51.100.7')).statusCode, 429, 'an IPv4-mapped address is the IPv4 client')

  const wide = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: String(limit), RATE_LIMIT_IPV6_PREFIX: '48' } })
  for (let i = 1; i <= limit; i++) t.not((await preview(wide, `2001:db8:1:${i}::1`)).statusCode, 429)
  t.equal((await preview(wide, '2001:db8:1:ffff::1')).statusCode, 429, 'RATE_LIMIT_IPV6_PREFIX=48: one budget per /48')
})

t.test('the public auth operations share one budget per client IP', async t => {
  const limit = 4
  const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: String(limit) } })
  const post = async (
    url: string,
    payload: Record<string, string>
  ) => await h.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload,
    remoteAddress: '192.0.2.50'
  })
  t.not((await post('/api/auth/invitation', { token: 'x' })).statusCode, 429)
  t.not((await post('/api/auth/signup', { token: 'x' })).statusCode, 429)
  t.not((await post('/api/auth/login-link', { email: 'nobody@example.com' })).statusCode, 429)
  t.not((await post('/api/auth/verify', { token: 'x' })).statusCode, 429)
  const fifth = await post('/api/auth/invitation', { token: 'x' })
  assertLimited(t, fifth, 'POST', '/api/auth/invitation', limit)
  t.equal(
    (await post('/api/auth/login-link', { email: 'nobody@example.com' })).statusCode, 429,
    'every operation draws on the same budget'
  )
})

t.test('a workspace holds at most API_KEYS_PER_WORKSPACE live keys (its MCP budget is bounded)', async t => {
  const h = await build(t, { env: { API_KEYS_PER_WORKSPACE: '3' } })
  const admin = await h.signIn({ role: 'admin' })
  const create = async () => await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { name: 'k', scopes: ALL_SCOPES }
  })
  // Concurrent creations cannot overshoot the cap.
  const first = await Promise.all(Array.from({ length: 5 }, create))
  t.same(first.map(r => r.statusCode).sort(), [201, 201, 201, 409, 409], 'three created, two refused')
  const refused = first.find(r => r.statusCode === 409)
  t.match(refused?.json(), { code: 'API_KEY_LIMIT_REACHED' })
  assertContract(t, 'POST', '/api/api-keys', refused as LightMyRequestResponse)
  const list = (await h.inject({
    method: 'GET',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie }
  })).json().items as Array<{ id: string }>
  t.equal(list.length, 3)

  const revoked = await h.inject({
    method: 'DELETE',
    url: `/api/api-keys/${list[0]?.id as string}`,
    headers: { cookie: admin.cookie }
  })
  t.equal(revoked.statusCode, 204)
  t.equal((await create()).statusCode, 201, 'a revoked key frees its place')

  const other = await h.signIn({ role: 'admin' })
  const elsewhere = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: other.cookie, 'content-type': 'application/json' },
    payload: { name: 'k', scopes: ALL_SCOPES }
  })
  t.equal(elsewhere.statusCode, 201, 'another workspace has its own cap')
})

t.test('a directory\'s SCIM requests have a budget of their own: an import past the REST budget goes on, a script\'s key is limited as before', async t => {
  // The defaults: a first import at 50 people a second (a lookup and a create each, one by one) is
  // 6,000 requests a minute, the whole REST budget; the directory's own budget holds it with room.
  const defaults = testConfig().rateLimit
  t.equal(defaults.apiKeyRestPerMinute, 6000, 'the REST budget is what it was')
  t.ok(defaults.apiKeyScimPerMinute >= 2 * 2 * 50 * 60, `the SCIM budget holds twice that import (${defaults.apiKeyScimPerMinute})`)

  // The same, scaled down: a REST budget of 4 and a SCIM budget of 24 a minute.
  const { h, admin, scim } = await scimFixture(t, {
    env: { API_KEY_REST_RATE_LIMIT_PER_MINUTE: '4', API_KEY_SCIM_RATE_LIMIT_PER_MINUTE: '24' }
  })
  const script = (await createApiKey(h, admin, 'script', ['members:read'])).secret
  const both = (await createApiKey(h, admin, 'both', ['members:read', 'scim'])).secret
  const rest = async (key: string) => (await h.inject({ method: 'GET', url: '/api/users', headers: { authorization: `Bearer ${key}` } })).statusCode

  // An import of 10 people, one by one as Okta does: 20 requests, five times the REST budget.
  const answers: number[] = []
  for (let i = 0; i < 10; i++) {
    const userName = `person${i}@import.example.com`
    answers.push((await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)).status)
    answers.push((await scim('POST', '/api/scim/v2/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, emails: [{ value: userName, primary: true }], active: true
    })).status)
  }
  t.same([...new Set(answers)].sort(), [200, 201], 'the import: 20 requests, none refused')

  const byScript: number[] = []
  for (let i = 0; i < 5; i++) byScript.push(await rest(script))
  t.same(byScript, [200, 200, 200, 200, 429], 'a script\'s key: 4 a minute, then 429')

  // A key holding scim beside other scopes: its SCIM requests do not spend its REST budget.
  const withBoth = async (url: string) => (await h.inject({ method: 'GET', url, headers: { authorization: `Bearer ${both}` } })).statusCode
  t.same([await withBoth('/api/scim/v2/Users?count=1'), await withBoth('/api/scim/v2/Users?count=1')], [200, 200])
  const restOfBoth: number[] = []
  for (let i = 0; i < 5; i++) restOfBoth.push(await rest(both))
  t.same(restOfBoth, [200, 200, 200, 200, 429], 'its REST budget is whole, then spent')

  // Past its own budget the directory is refused as SCIM says, with Retry-After.
  for (let i = answers.length; i < 24; i++) t.equal((await scim('GET', '/api/scim/v2/Users?count=0')).status, 200)
  const refused = await scim('GET', '/api/scim/v2/Users?count=0')
  t.ok(isScimError(refused.body, 429), `a SCIM error: ${JSON.stringify(refused.body)}`)
  t.same(refused.problems, [], 'as the contract declares')
  t.equal(refused.res.headers['x-ratelimit-limit'], '24')
  t.ok(Number(refused.res.headers['retry-after']) >= 1, 'Retry-After')
})
