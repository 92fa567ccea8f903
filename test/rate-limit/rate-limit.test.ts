import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertLimited } from '../helpers/rate-limit.js'
import { createApiKey, MCP, mcpRequest as mcpCall } from '../helpers/mcp.js'

// Rate limits with the in-memory store: 100 requests a minute per API key (the spec's limit),
// session requests unlimited, public auth operations per client IP (honouring TRUST_PROXY only
// for trusted peers). Every 429 is an ErrorResponse with Retry-After and x-ratelimit-* headers.

const PREVIEW = '/api/auth/invitation'

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
    await h.inject({
      method: 'POST',
      url: PREVIEW,
      headers: { 'content-type': 'application/json', ...headers },
      payload: { token: 'not-a-real-token' },
      remoteAddress
    })

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
    t.not(
      (await preview(h, { 'x-forwarded-for': '203.0.113.8' })).statusCode, 429,
      'another client behind the proxy is not limited'
    )

    // A peer that is not the trusted proxy cannot pick its key with X-Forwarded-For.
    for (let i = 0; i < limit; i++) {
      t.not((await preview(h, { 'x-forwarded-for': `198.51.100.${i + 1}` }, '192.0.2.44')).statusCode, 429)
    }
    assertLimited(t, await preview(h, { 'x-forwarded-for': '198.51.100.200' }, '192.0.2.44'), 'POST', PREVIEW, limit)
  })
})
