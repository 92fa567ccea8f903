import t from 'tap'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Redis } from 'ioredis'
import { build, TEST_REDIS_URL, type TestApp } from '../helpers/build.js'
import { contract } from '../helpers/contract-examples.js'
import { deref, METHODS } from '../helpers/contract.js'
import { startFakeHttp } from '../helpers/fake-http.js'
import { slackEnv, startSlackFake } from '../helpers/slack.js'

// No unbounded writes by anonymous clients. The anonymous operations are derived from the
// contract (security [] or an empty alternative); those that write — every unsafe method, and
// every GET seen to change the database when called — must declare a per-address rate limit
// (x-fastify-config.rateLimit, 429 declared), and each declared limit is enforced: over real
// sockets, one source address (127.0.0.N) per operation, the limit+1st request is 429. Memory
// store, and Redis when TEST_REDIS_URL is set.

type Op = {
  operationId: string,
  security?: Array<Record<string, string[]>>,
  parameters?: unknown[],
  responses: Record<string, unknown>,
  'x-fastify-config'?: { rateLimit?: { scope: string } }
}
const LIMIT = 3

const anonymous: Array<{ method: string, path: string, op: Op }> = []
for (const [path, item] of Object.entries(contract.paths)) {
  for (const method of METHODS) {
    const op = item[method] as Op | undefined
    if (op === undefined) continue
    const security = op.security ?? (contract.security as Op['security']) ?? []
    if (security.length === 0 || security.some(r => Object.keys(r).length === 0)) anonymous.push({ method, path, op })
  }
}

/** The URL of an operation with its path parameters and required query parameters from their examples. */
function urlOf (path: string, op: Op): string {
  const query = new URLSearchParams()
  let url = path
  for (const p of (op.parameters ?? []).map(x => deref(x as Record<string, unknown>))) {
    const example = String(p.example ?? 'x')
    if (p.in === 'path') url = url.replace(`{${String(p.name)}}`, encodeURIComponent(example))
    if (p.in === 'query' && p.required === true) query.set(String(p.name), example)
  }
  return query.size > 0 ? `${url}?${query.toString()}` : url
}

/** One request over a real socket from `localAddress`. */
async function send (port: number, localAddress: string, method: string, url: string) {
  const req = httpRequest({ host: '127.0.0.1', port, localAddress, method: method.toUpperCase(), path: url, agent: false })
  req.end()
  const [res] = await once(req, 'response') as [import('node:http').IncomingMessage]
  const chunks: Buffer[] = []
  for await (const c of res) chunks.push(c as Buffer)
  return { status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), headers: res.headers }
}

/** Rows in every table of the service's schema: what a write changes. */
async function fingerprint (h: TestApp): Promise<string> {
  const tables = (await h.db.query<{ name: string }>(
    `SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1`
  )).rows.map(r => r.name)
  const counts: string[] = []
  for (const name of tables) {
    const n = (await h.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}"`)).rows[0]?.n
    counts.push(`${name}=${String(n)}`)
  }
  return counts.join(',')
}

const stores = ['memory', ...(TEST_REDIS_URL !== null ? ['redis'] : [])]
for (const store of stores) {
  t.test(`every anonymous operation that writes is limited per address (${store} store)`, async t => {
    const workos = await startFakeHttp(t)
    const slack = await startSlackFake(t)
    let redis: Redis | undefined
    if (store === 'redis') {
      // A prefix of its own: the shared Redis also holds other runs' counters for 127.0.0.N.
      redis = new Redis(TEST_REDIS_URL as string, {
        keyPrefix: `test:anon:${randomBytes(6).toString('hex')}:`, enableOfflineQueue: false, commandTimeout: 500
      })
      await once(redis, 'ready')
      t.teardown(() => { redis?.disconnect() })
    }
    const h = await build(t, {
      ...(redis !== undefined ? { redis } : {}),
      env: {
        ...slackEnv(slack.fake),
        WORKOS_API_KEY: 'sk_test_fake_key',
        WORKOS_CLIENT_ID: 'client_fake_123',
        WORKOS_API_HOSTNAME: workos.hostname,
        WORKOS_API_PORT: String(workos.port),
        WORKOS_API_HTTPS: 'false',
        AUTH_RATE_LIMIT_PER_MINUTE: String(LIMIT)
      }
    })
    await h.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = h.app.server.address() as AddressInfo
    t.ok(anonymous.length >= 10, `${anonymous.length} anonymous operations in the contract`)

    // Which anonymous GETs (and HEADs) write: each called LIMIT times from an address of its own.
    let host = 10
    const writes: string[] = []
    for (const { method, path, op } of anonymous) {
      if (method !== 'get' && method !== 'head') {
        writes.push(op.operationId)
        continue
      }
      const before = await fingerprint(h)
      const from = `127.0.0.${host++}`
      for (let i = 0; i < LIMIT; i++) await send(port, from, method, urlOf(path, op))
      if (await fingerprint(h) !== before) writes.push(op.operationId)
    }
    t.ok(writes.includes('getOauthLogin'), 'starting an identity-provider sign-in is seen to write')

    const limited = anonymous.filter(({ op }) => op['x-fastify-config']?.rateLimit !== undefined)
    const limitedIds = limited.map(({ op }) => op.operationId)
    t.same(writes.filter(id => !limitedIds.includes(id)), [], 'no anonymous operation writes without a limit')

    for (const { method, path, op } of limited) {
      t.equal(op['x-fastify-config']?.rateLimit?.scope, 'client-ip', `${op.operationId}: limited per address`)
      t.ok(op.responses['429'] !== undefined, `${op.operationId}: 429 declared`)
      const from = `127.0.0.${host++}`
      const url = urlOf(path, op)
      for (let i = 0; i < LIMIT; i++) {
        t.not((await send(port, from, method, url)).status, 429, `${op.operationId}: request ${i + 1} passes`)
      }
      const refused = await send(port, from, method, url)
      t.equal(refused.status, 429, `${op.operationId}: request ${LIMIT + 1} from one address is refused`)
      t.equal((JSON.parse(refused.body) as { code?: string }).code, 'RATE_LIMITED')
      t.not((await send(port, `127.0.0.${host++}`, method, url)).status, 429, `${op.operationId}: another address is not`)
    }
  })
}

t.test('OAuth states and login tokens are swept minutes after they expire', async t => {
  // RETENTION_EXPIRED_TOKEN_MINUTES=10 (default): gone at the first sweep 10 minutes past expiry.
  const workos = await startFakeHttp(t)
  const h = await build(t, {
    env: {
      WORKOS_API_KEY: 'sk_test_fake_key',
      WORKOS_CLIENT_ID: 'client_fake_123',
      WORKOS_API_HOSTNAME: workos.hostname,
      WORKOS_API_PORT: String(workos.port),
      WORKOS_API_HTTPS: 'false'
    }
  })
  const admin = await h.signIn()
  for (let i = 0; i < 5; i++) t.equal((await h.inject({ method: 'GET', url: '/api/oauth/login' })).statusCode, 302)
  const login = await h.inject({
    method: 'POST', url: '/api/auth/login-link', payload: { email: admin.email }
  })
  t.equal(login.statusCode, 202)
  await h.app.services.auth.idle()
  const rows = async () => (await h.db.query<{ states: number, tokens: number }>(
    'SELECT (SELECT count(*)::int FROM oauth_states) AS states, (SELECT count(*)::int FROM login_tokens) AS tokens'
  )).rows[0]
  t.same(await rows(), { states: 5, tokens: 1 })
  // States live 10 minutes, login tokens 15; each goes at the first sweep 10 minutes past expiry.
  h.clock.advance(19 * 60_000)
  await h.app.retention.sweep()
  t.same(await rows(), { states: 5, tokens: 1 }, 'expired less than 10 minutes ago: kept')
  h.clock.advance(2 * 60_000)
  await h.app.retention.sweep()
  t.same(await rows(), { states: 0, tokens: 1 }, 'states 11 minutes past expiry: swept; the token (6) kept')
  h.clock.advance(5 * 60_000)
  await h.app.retention.sweep()
  t.same(await rows(), { states: 0, tokens: 0 }, 'the token 11 minutes past expiry: swept')
  t.equal(h.config.retention.sweepMinutes, 5, 'the sweep runs every 5 minutes by default')
})
