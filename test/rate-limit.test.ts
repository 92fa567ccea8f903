import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, type TestApp } from './helpers/build.js'
import { assertContract } from './helpers/contract.js'
import { createApiKey, MCP, MCP_ACCEPT, mcpRequest as mcpCall } from './helpers/mcp.js'

// Rate limits with the in-memory store: 100 requests a minute per API key (the spec's limit),
// session requests unlimited, public auth operations per client IP (honouring TRUST_PROXY only
// for trusted peers). Every 429 is an ErrorResponse with Retry-After and x-ratelimit-* headers.

const PREVIEW = '/api/auth/invitation'

function assertLimited (t: Tap, res: LightMyRequestResponse, method: string, url: string, limit: number): void {
  t.equal(res.statusCode, 429, 'limited')
  t.equal(res.json().code, 'RATE_LIMITED')
  t.match(res.json().message, /^Too many requests; retry in \d+ seconds$/)
  const retryAfter = Number(res.headers['retry-after'])
  t.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After is 1..60 seconds (${String(res.headers['retry-after'])})`)
  t.equal(res.headers['x-ratelimit-limit'], String(limit))
  t.equal(res.headers['x-ratelimit-remaining'], '0')
  t.ok(Number(res.headers['x-ratelimit-reset']) >= 1, 'x-ratelimit-reset')
  assertContract(t, method, url, res)
}
type Tap = Pick<typeof t, 'equal' | 'match' | 'ok' | 'same'>

t.test('100 requests a minute per API key; other keys and sessions unaffected', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const keyA = (await createApiKey(h, admin)).secret
  const keyB = (await createApiKey(h, admin)).secret

  const statuses: number[] = []
  for (let i = 0; i < 100; i++) statuses.push((await mcpCall(h, keyA)).statusCode)
  t.same([...new Set(statuses)], [200], 'the first 100 requests pass')
  const limited = await mcpCall(h, keyA)
  assertLimited(t, limited, 'POST', MCP, 100)

  const other = await mcpCall(h, keyB)
  t.equal(other.statusCode, 200, 'a second key of the same admin has its own budget')
  t.equal(other.headers['x-ratelimit-remaining'], '99')

  const me: number[] = []
  for (let i = 0; i < 120; i++) {
    const res = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
    me.push(res.statusCode)
    if (i === 0) t.notOk(res.headers['x-ratelimit-limit'], 'session requests carry no limit')
  }
  t.same([...new Set(me)], [200], '120 session requests in a row all pass')

  const revoked = await h.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie: admin.cookie } })
  t.equal(revoked.statusCode, 200, 'admin API (session) unaffected by the key being limited')
})

t.test('public auth operations: per client IP', async t => {
  const limit = 5
  const preview = async (h: TestApp, headers: Record<string, string>, remoteAddress = '127.0.0.1') =>
    await h.inject({ method: 'POST', url: PREVIEW, headers: { 'content-type': 'application/json', ...headers }, payload: { token: 'not-a-real-token' }, remoteAddress })

  await t.test('without TRUST_PROXY, X-Forwarded-For is ignored (cannot be spoofed)', async t => {
    const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: String(limit) } })
    for (let i = 0; i < limit; i++) {
      const res = await preview(h, { 'x-forwarded-for': `203.0.113.${i + 1}` })
      t.not(res.statusCode, 429, `request ${i + 1} passes`)
    }
    const res = await preview(h, { 'x-forwarded-for': '198.51.100.99' })
    assertLimited(t, res, 'POST', PREVIEW, limit)
    t.not((await preview(h, {}, '192.0.2.10')).statusCode, 429, 'another peer address has its own budget')
  })

  await t.test('with TRUST_PROXY=127.0.0.1, the forwarded address of a trusted proxy is the key', async t => {
    const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: String(limit), TRUST_PROXY: '127.0.0.1' } })
    for (let i = 0; i < limit; i++) t.not((await preview(h, { 'x-forwarded-for': '203.0.113.7' })).statusCode, 429)
    assertLimited(t, await preview(h, { 'x-forwarded-for': '203.0.113.7' }), 'POST', PREVIEW, limit)
    t.not((await preview(h, { 'x-forwarded-for': '203.0.113.8' })).statusCode, 429, 'another client behind the proxy is not limited')

    // A peer that is not the trusted proxy cannot pick its key with X-Forwarded-For.
    for (let i = 0; i < limit; i++) {
      t.not((await preview(h, { 'x-forwarded-for': `198.51.100.${i + 1}` }, '192.0.2.44')).statusCode, 429)
    }
    assertLimited(t, await preview(h, { 'x-forwarded-for': '198.51.100.200' }, '192.0.2.44'), 'POST', PREVIEW, limit)
  })
})

const batchOf = (n: number, start = 0) => Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: start + i, method: 'tools/call', params: { name: 'list_invitations', arguments: {} } }))
const mcpBatch = async (h: TestApp, key: string, payload: unknown[]) => await h.inject({
  method: 'POST', url: MCP, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: MCP_ACCEPT }, payload: JSON.stringify(payload)
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
  t.match(empty.json(), { code: 'VALIDATION_FAILED', details: { jsonrpc: { code: -32600 } } }, 'with the JSON-RPC error Invalid Request')
  assertContract(t, 'POST', MCP, empty)
})

t.test('IPv6 clients are keyed by their /64 (configurable); IPv4-mapped IPv6 as IPv4', async t => {
  const limit = 3
  const preview = async (h: TestApp, remoteAddress: string) =>
    await h.inject({ method: 'POST', url: PREVIEW, headers: { 'content-type': 'application/json' }, payload: { token: 'not-a-real-token' }, remoteAddress })

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
  const post = async (url: string, payload: Record<string, string>) => await h.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload, remoteAddress: '192.0.2.50' })
  t.not((await post('/api/auth/invitation', { token: 'x' })).statusCode, 429)
  t.not((await post('/api/auth/signup', { token: 'x' })).statusCode, 429)
  t.not((await post('/api/auth/login-link', { email: 'nobody@example.com' })).statusCode, 429)
  t.not((await post('/api/auth/verify', { token: 'x' })).statusCode, 429)
  const fifth = await post('/api/auth/invitation', { token: 'x' })
  assertLimited(t, fifth, 'POST', '/api/auth/invitation', limit)
  t.equal((await post('/api/auth/login-link', { email: 'nobody@example.com' })).statusCode, 429, 'every operation draws on the same budget')
})

t.test('a workspace holds at most API_KEYS_PER_WORKSPACE live keys (its MCP budget is bounded)', async t => {
  const h = await build(t, { env: { API_KEYS_PER_WORKSPACE: '3' } })
  const admin = await h.signIn({ role: 'admin' })
  const create = async () => await h.inject({ method: 'POST', url: '/api/api-keys', headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: { name: 'k' } })
  // Concurrent creations cannot overshoot the cap.
  const first = await Promise.all(Array.from({ length: 5 }, create))
  t.same(first.map(r => r.statusCode).sort(), [201, 201, 201, 409, 409], 'three created, two refused')
  const refused = first.find(r => r.statusCode === 409)
  t.match(refused?.json(), { code: 'API_KEY_LIMIT_REACHED' })
  assertContract(t, 'POST', '/api/api-keys', refused as LightMyRequestResponse)
  const list = (await h.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie: admin.cookie } })).json().items as Array<{ id: string }>
  t.equal(list.length, 3)

  const revoked = await h.inject({ method: 'DELETE', url: `/api/api-keys/${list[0]?.id as string}`, headers: { cookie: admin.cookie } })
  t.equal(revoked.statusCode, 204)
  t.equal((await create()).statusCode, 201, 'a revoked key frees its place')

  const other = await h.signIn({ role: 'admin' })
  const elsewhere = await h.inject({ method: 'POST', url: '/api/api-keys', headers: { cookie: other.cookie, 'content-type': 'application/json' }, payload: { name: 'k' } })
  t.equal(elsewhere.statusCode, 201, 'another workspace has its own cap')
})
