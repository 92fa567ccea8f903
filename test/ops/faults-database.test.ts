import t, { type Test } from 'tap'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { insertUser } from '../../src/db/users.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { TEST_DATABASE_URL, testConfig, testDatabase, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey, MCP, mcpRequest } from '../helpers/mcp.js'
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { DatabaseUnavailableError, openDatabase, type Database } from '../../src/db/client.js'
import { ALL_SCOPES } from '../helpers/mcp.js'
import { until } from '../helpers/service-process.js'

// Database faults, seen from outside: the production buildApp with its own pg pool reaches
// PostgreSQL through a TCP proxy that refuses, freezes and cuts. A valid cookie or API key is
// never answered 401 because the database is away: 503 SERVICE_UNAVAILABLE with Retry-After,
// within the configured deadlines; nothing is lost; when the database is back the same
// credentials work again without a restart.

const skip = TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set: the database fault suite needs PostgreSQL (CI runs it)' : false

const TIMEOUTS = {
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  DATABASE_QUERY_TIMEOUT_MS: '1000',
  DATABASE_TRANSACTION_TIMEOUT_MS: '3000'
}
/**
 * The longest a request may wait on a frozen database: acquire + one statement on the wire
 * (+1 s) + slack for a loaded machine.
 */
const BOUND_MS = 1000 + 2000 + 3000

interface Rig {
  app: FastifyInstance,
  proxy: TcpProxy,
  direct: Database,
  cookie: string,
  sessionId: string,
  key: {
    id: string,
    secret: string
  }
}

async function rig (t: Test): Promise<Rig> {
  const direct = await testDatabase(t) // a migrated database of its own, reached without the proxy
  const target = new URL(direct.url as string) // its own database, copied from the template
  const proxy = await startTcpProxy(t, { host: target.hostname, port: Number(target.port || 5432) })
  const url = new URL(target.href)
  url.hostname = '127.0.0.1'
  url.port = String(proxy.port)
  const config = testConfig({ DATABASE_URL: url.href, HEALTH_CACHE_MS: '0', ...TIMEOUTS })
  const app = await buildApp({ config, logger: false })
  t.teardown(async () => { await app.close() })
  await app.ready()
  const now = new Date()
  const ws = await insertWorkspace(direct, { name: 'Acme', now })
  const user = await insertUser(
    direct, { workspaceId: ws.id, email: 'admin@example.com', name: null, role: 'admin', now }
  )
  const { sessionId, token } = await app.services.sessions.start(direct, user.id, 'signup')
  const cookie = `${SESSION_COOKIE}=${token}`
  const key = await createApiKey(
    asTestApp(app), { cookie, userId: user.id, workspaceId: ws.id, email: 'admin@example.com', sessionId }
  )
  return { app, proxy, direct, cookie, sessionId, key }
}

/** The MCP helpers only inject; this app is built by buildApp directly (its own pool, through the proxy). */
function asTestApp (app: FastifyInstance): TestApp {
  return { inject: async (o: InjectOptions) => await app.inject(o) } as unknown as TestApp
}

interface Timed { res: LightMyRequestResponse, ms: number }

async function timed (p: () => Promise<LightMyRequestResponse>): Promise<Timed> {
  const started = performance.now()
  const res = await p()
  return { res, ms: Math.round(performance.now() - started) }
}

/** The three doors: session cookie, API key, health. */
async function callAll (r: Rig): Promise<Record<'cookie' | 'apiKey' | 'health', Timed>> {
  const [cookie, apiKey, health] = await Promise.all([
    timed(async () => await r.app.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: r.cookie } })),
    timed(async () => await mcpRequest(asTestApp(r.app), r.key.secret)),
    timed(async () => await r.app.inject({ method: 'GET', url: '/api/health' }))
  ])
  return { cookie, apiKey, health }
}

const ROUTES = { cookie: ['GET', '/api/users/me'], apiKey: ['POST', MCP], health: ['GET', '/api/health'] } as const

function assertUnavailable (t: Test, answers: Awaited<ReturnType<typeof callAll>>, label: string): void {
  for (const [door, { res, ms }] of Object.entries(answers) as Array<[keyof typeof ROUTES, Timed]>) {
    t.equal(res.statusCode, 503, `${label}, ${door}: 503, never 401 (${ms} ms)`)
    t.equal(res.json().code, 'SERVICE_UNAVAILABLE', `${label}, ${door}: SERVICE_UNAVAILABLE`)
    if (door !== 'health') {
      t.match(
        res.headers['retry-after'], /^[1-9][0-9]?$/, `${label}, ${door}: Retry-After in seconds`
      )
    }
    t.ok(ms < BOUND_MS, `${label}, ${door}: answered within the deadlines (${ms} ms < ${BOUND_MS} ms)`)
    assertContract(t, ROUTES[door][0], ROUTES[door][1], res)
  }
}

/** After the database is back: the pool reconnects by itself; poll health (the event) until it answers 200. */
async function recovered (r: Rig): Promise<number> {
  const started = performance.now()
  await until('/api/health to answer 200', async () =>
    (await r.app.inject({ method: 'GET', url: '/api/health' })).statusCode === 200 || undefined, 15_000)
  return Math.round(performance.now() - started)
}

async function assertWorking (t: Test, r: Rig, label: string): Promise<void> {
  const answers = await callAll(r)
  t.equal(answers.cookie.res.statusCode, 200, `${label}: the same session cookie works`)
  t.equal(answers.cookie.res.json().user.email, 'admin@example.com')
  t.equal(answers.apiKey.res.statusCode, 200, `${label}: the same API key works`)
  t.equal(answers.health.res.statusCode, 200, `${label}: healthy`)
  const s = await r.direct.query<{ revoked_at: Date | null }>(
    'SELECT revoked_at FROM sessions WHERE id = $1', [r.sessionId]
  )
  t.same(s.rows, [{ revoked_at: null }], `${label}: the session row is kept, not revoked`)
  const k = await r.direct.query<{ revoked_at: Date | null }>(
    'SELECT revoked_at FROM api_keys WHERE id = $1', [r.key.id]
  )
  t.same(k.rows, [{ revoked_at: null }], `${label}: the API key is kept`)
}

t.test('database refused, then back: 503 + Retry-After, never 401; the same credentials work again', { skip }, async t => {
  const r = await rig(t)
  await assertWorking(t, r, 'before')
  r.proxy.down()
  assertUnavailable(t, await callAll(r), 'refused')
  // A write during the outage is 503 too, and leaves nothing behind.
  const write = await r.app.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: r.cookie },
    payload: { name: 'during outage', scopes: ALL_SCOPES }
  })
  t.equal(write.statusCode, 503, 'a write is 503')
  r.proxy.up()
  t.comment(`healthy again ${await recovered(r)} ms after the database came back`)
  await assertWorking(t, r, 'back')
  const keys = await r.direct.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM api_keys WHERE name = 'during outage'"
  )
  t.equal(keys.rows[0]?.n, 0, 'the refused write left no row')
})

t.test('database frozen, then thawed: 503 within the deadlines; the pool recovers by itself', { skip }, async t => {
  const r = await rig(t)
  await assertWorking(t, r, 'before')
  r.proxy.freeze() // the pool's open connections now lead nowhere; new ones are held
  assertUnavailable(t, await callAll(r), 'frozen')
  const write = await timed(async () => await r.app.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: r.cookie },
    payload: { name: 'during freeze', scopes: ALL_SCOPES }
  }))
  t.equal(write.res.statusCode, 503, `a write is 503 (${write.ms} ms)`)
  t.ok(write.ms < BOUND_MS, 'within the deadlines')
  r.proxy.up()
  t.comment(`healthy again ${await recovered(r)} ms after the thaw`)
  await assertWorking(t, r, 'thawed')
})

t.test('connections cut under the pool (server restarted): the next requests succeed', { skip }, async t => {
  const r = await rig(t)
  await assertWorking(t, r, 'before')
  r.proxy.cut()
  // The pool notices dead clients on use; at worst one request per dead client is 503, never 401.
  const statuses = await Promise.all(
    Array.from(
      { length: 5 },
      async () => (await r.app.inject({
        method: 'GET',
        url: '/api/users/me',
        headers: { cookie: r.cookie }
      })).statusCode
    )
  )
  t.ok(statuses.every(s => s === 200 || s === 503), `200 or 503, never 401: ${statuses.join(',')}`)
  await recovered(r)
  await assertWorking(t, r, 'after the cut')
})

// A transaction's own deadline (DATABASE_TRANSACTION_TIMEOUT_MS, src/db/client.ts): when it passes
// the client's connection is ended through pg's client.end(), so a statement in flight fails at
// once (not at its own, longer deadline), one sent after it fails too, the server rolls both
// back, and the pool goes on with new connections.
t.test('a transaction past its deadline fails at once and is rolled back; the pool goes on', { skip }, async t => {
  const direct = await testDatabase(t)
  const lost: Error[] = []
  const db = await openDatabase({
    url: direct.url as string,
    dataDir: null,
    queryTimeoutMs: 5000,
    transactionTimeoutMs: 500,
    onError: e => { lost.push(e) }
  })
  t.teardown(async () => { await db.close() })
  await db.exec('CREATE TABLE deadline_probe (n int)')
  const failure = async (work: Promise<unknown>): Promise<unknown> => await work.then(() => null, (err: unknown) => err)

  const started = Date.now()
  const inFlight = await failure(db.transaction(async tx => {
    await tx.query('INSERT INTO deadline_probe VALUES (1)')
    await tx.query('SELECT pg_sleep(4)')
  }))
  const ms = Date.now() - started
  t.ok(inFlight instanceof DatabaseUnavailableError, `a statement in flight: ${String(inFlight)}`)
  t.ok(ms < 2000, `failed at the deadline, not at the statement's end (${ms} ms)`)

  const between = await failure(db.transaction(async tx => {
    await tx.query('INSERT INTO deadline_probe VALUES (2)')
    await sleep(800)
    await tx.query('SELECT 1')
  }))
  t.ok(between instanceof DatabaseUnavailableError, `a statement after the deadline: ${String(between)}`)

  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM deadline_probe')
  t.equal(rows[0]?.n, 0, 'both transactions rolled back')
  t.equal(db.poolStats().total, 1, 'the ended clients left the pool; one serves on')
  t.same(lost, [], 'an end of ours is no lost connection')
})
