import t from 'tap'
import { once } from 'node:events'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { FastifyRequest } from 'fastify'
import { buildApp } from '../../src/app.js'
import { FakeClock } from '../../src/clock.js'
import { loggerOptions } from '../../src/logger.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { requestCookie } from '../../src/http/cookies.js'
import { build, testConfig, testDatabase } from '../helpers/build.js'
import { createApiKey, MCP, MCP_ACCEPT } from '../helpers/mcp.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { insertUser } from '../../src/db/users.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// Failed API-key attempts cost a database lookup each: past API_KEY_FAILURES_PER_MINUTE failures
// from one address in a minute, that address's bearer attempts are refused with 429 before any
// lookup, and reaching the bound is logged. And the api-key-only scope limits API-key callers of
// an operation open to both doors while its cookie callers are not counted.

async function mcpFrom (port: number, from: string, key: string) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    localAddress: from,
    method: 'POST',
    path: MCP,
    agent: false,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: MCP_ACCEPT }
  })
  req.end(body)
  const [res] = await once(req, 'response') as [IncomingMessage]
  let text = ''
  for await (const c of res) text += String(c)
  const code = res.statusCode === 200 ? null : (JSON.parse(text) as { code: string }).code
  return { status: res.statusCode ?? 0, code }
}

t.test('failed API-key attempts from one address are bounded, logged, and cost no lookup past the bound', async t => {
  let out = ''
  const stream = new Writable({ write (chunk, _enc, cb) { out += String(chunk); cb() } })
  // The real database, its statements on api_keys counted.
  const inner = await testDatabase(t)
  let keyLookups = 0
  const db = new Proxy(inner, {
    get (target, prop) {
      if (prop === 'query') {
        return async (sql: string, params?: unknown[]) => {
          if (sql.includes('api_keys')) keyLookups++
          return await target.query(sql, params)
        }
      }
      const v = Reflect.get(target, prop) as unknown
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v
    }
  })
  const h = await build(t, { db, env: { API_KEY_FAILURES_PER_MINUTE: '5' }, logger: { ...loggerOptions('warn'), stream } })
  const admin = await h.signIn()
  const key = (await createApiKey(h, admin)).secret
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as AddressInfo
  const wrong = key.slice(0, -4) + 'xxxx'

  for (let i = 0; i < 5; i++) t.same(await mcpFrom(port, '127.0.0.2', wrong), { status: 401, code: 'UNAUTHENTICATED' })
  t.match(out, /failed API-key attempts limit reached \(API_KEY_FAILURES_PER_MINUTE\)/)
  t.equal(out.split('failed API-key attempts limit reached').length - 1, 1, 'logged once when reached')
  const before = keyLookups
  for (let i = 0; i < 20; i++) {
    t.same(await mcpFrom(port, '127.0.0.2', wrong), { status: 429, code: 'RATE_LIMITED' }, `attempt ${i + 6}: refused`)
  }
  t.same(await mcpFrom(port, '127.0.0.2', key), { status: 429, code: 'RATE_LIMITED' }, 'a valid key from that address waits too')
  t.equal(keyLookups, before, 'no lookup for refused attempts')
  t.same(await mcpFrom(port, '127.0.0.3', key), { status: 200, code: null }, 'another address is served')
  t.same(await mcpFrom(port, '127.0.0.3', wrong), { status: 401, code: 'UNAUTHENTICATED' }, 'and has its own count')
})

t.test('api-key-only: API-key callers of a mixed operation are limited, its cookie callers are not', async t => {
  const db = await testDatabase(t)
  const config = testConfig({ API_KEY_REST_RATE_LIMIT_PER_MINUTE: '3' })
  const app = await buildApp({ config, db, clock: new FakeClock(), logger: false })
  t.teardown(async () => { await app.close() })
  // An operation open to the cookie and to API keys, authenticated by the real services, limited
  // by the scope as the contract would name it (x-fastify-config.rateLimit.scope: api-key-only).
  const limited = app.rateLimitedRoute({ scope: 'api-key-only' })
  app.get('/test/mixed', {
    config: { rateLimit: limited.rateLimit },
    onRequest: async (request: FastifyRequest) => {
      const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1]
      const p = bearer !== undefined
        ? await app.services.security.authenticateApiKey(bearer)
        : await app.services.security.authenticateSession(requestCookie(request, SESSION_COOKIE) ?? '')
      if (p === null) throw new Error('unauthenticated')
      request.principal = { ...p, requestId: request.id }
    }
  }, async () => ({ ok: true }))
  await app.ready()
  const now = new Date()
  const ws = await insertWorkspace(db, { name: 'Acme', now })
  const user = await insertUser(db, { workspaceId: ws.id, email: 'a@example.com', name: null, role: 'admin', now })
  const { token } = await app.services.sessions.start(db, user.id, 'signup')
  const cookie = `${SESSION_COOKIE}=${token}`
  const keyRes = await app.inject({ method: 'POST', url: '/api/api-keys', headers: { cookie }, payload: { name: 'k', scopes: ALL_SCOPES } })
  const key = (keyRes.json() as { secret: string }).secret

  const byKey: number[] = []
  for (let i = 0; i < 4; i++) byKey.push((await app.inject({ url: '/test/mixed', headers: { authorization: `Bearer ${key}` } })).statusCode)
  t.same(byKey, [200, 200, 200, 429], 'the key: 3 a minute, then 429')
  const byCookie: number[] = []
  for (let i = 0; i < 10; i++) {
    const res = await app.inject({ url: '/test/mixed', headers: { cookie } })
    byCookie.push(res.statusCode)
    if (i === 0) t.notOk(res.headers['x-ratelimit-limit'], 'a cookie call carries no limit')
  }
  t.same([...new Set(byCookie)], [200], 'the cookie: 10 in a row, none counted, none refused')
})
