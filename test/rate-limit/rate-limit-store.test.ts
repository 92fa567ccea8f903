import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { closedPort } from '../helpers/smtp.js'
import { createApiKey, MCP, mcpRequest } from '../helpers/mcp.js'

// REDIS_URL set but Redis unreachable (a closed loopback port). RATE_LIMIT_FAIL_OPEN=true (the
// default): requests are answered at once and counted in this instance's memory, so the limit
// still holds per instance. RATE_LIMIT_FAIL_OPEN=false: limited operations answer 503 with Retry-After.

async function timedMcpCall (h: TestApp, key: string): Promise<{ res: LightMyRequestResponse, ms: number }> {
  const started = performance.now()
  const res = await mcpRequest(h, key)
  return { res, ms: performance.now() - started }
}

t.test('fail-open (default): Redis down, requests pass quickly and the limit holds per instance', async t => {
  const port = await closedPort()
  const h = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}` } })
  t.equal(h.config.rateLimit.failOpen, true, 'fail-open is the default')
  t.equal(h.app.rateLimitStore, 'redis')
  const admin = await h.signIn({ role: 'admin' })
  const key = (await createApiKey(h, admin)).secret

  let slowest = 0
  const statuses = new Set<number>()
  for (let i = 0; i < 100; i++) {
    const { res, ms } = await timedMcpCall(h, key)
    statuses.add(res.statusCode)
    slowest = Math.max(slowest, ms)
  }
  t.same([...statuses], [200], '100 requests pass while Redis is down')
  // Nothing waits for Redis: no offline queue, connection refused at once.
  t.ok(slowest < 2000, `no request waits for Redis (slowest ${Math.round(slowest)} ms)`)
  const { res } = await timedMcpCall(h, key)
  t.equal(res.statusCode, 429, 'the 101st is still limited (counted in memory)')
  assertContract(t, 'POST', MCP, res)
})

t.test('fail-closed: Redis down, limited operations answer 503 with Retry-After; unlimited ones work', async t => {
  const port = await closedPort()
  const h = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${port}`, RATE_LIMIT_FAIL_OPEN: 'false' } })
  const admin = await h.signIn({ role: 'admin' })
  const key = (await createApiKey(h, admin)).secret

  const { res, ms } = await timedMcpCall(h, key)
  t.equal(res.statusCode, 503, 'an outage of Redis is not the caller\'s fault: 503, not 500')
  t.equal(res.json().code, 'SERVICE_UNAVAILABLE')
  t.equal(res.headers['retry-after'], '5')
  t.notMatch(res.body, /redis|stream|ECONN|writeable|enableOfflineQueue/i, 'masked: no Redis error text')
  assertContract(t, 'POST', MCP, res)
  t.ok(ms < 2000, `answered quickly (${Math.round(ms)} ms)`)

  const preview = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    headers: { 'content-type': 'application/json' },
    payload: { token: 'x' }
  })
  t.equal(preview.statusCode, 503, 'public auth operations (per-IP limit) too')
  t.equal(preview.headers['retry-after'], '5')
  assertContract(t, 'POST', '/api/auth/invitation', preview)

  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
  t.equal(me.statusCode, 200, 'session requests have no limit and do not need Redis')
})
