import t from 'tap'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { build, testDatabase, TEST_REDIS_URL } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey as newKey, MCP, mcpRequest as mcpCall } from '../helpers/mcp.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'

// The shared Redis store (TEST_REDIS_URL): several instances enforce one limit, and an outage
// of Redis at run time falls back to per-instance memory (fail-open) and recovers by itself.
// Keys are unique per run (a random keyPrefix, API-key ids); only keys made here are deleted.

const skip = TEST_REDIS_URL === null ? 'TEST_REDIS_URL is not set (e.g. redis://127.0.0.1:6379); shared-store tests skipped' : false

/** Deletes the keys matching `pattern` (SCAN, never FLUSH). */
async function deleteKeys (redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = []
  let cursor = '0'
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = next
    found.push(...keys)
  } while (cursor !== '0')
  if (found.length > 0) await redis.del(...found)
  return found
}

t.test('two instances sharing one Redis enforce one limit of 100 per key', { skip }, async t => {
  const url = TEST_REDIS_URL as string
  const prefix = `test:rl:${randomBytes(6).toString('hex')}:`
  const plain = new Redis(url)
  t.teardown(async () => {
    await deleteKeys(plain, `${prefix}*`)
    plain.disconnect()
  })
  // Each instance has its own client, configured as production's, sharing the run's prefix.
  const client = () => {
    const r = new Redis(
      url, { keyPrefix: prefix, enableOfflineQueue: false, commandTimeout: 500, maxRetriesPerRequest: 1 }
    )
    t.teardown(() => { r.disconnect() })
    return r
  }
  const a = client()
  const b = client()
  // Connected before the first request: a call made while connecting would fail open to memory.
  await Promise.all([a, b].map(async r => { if (r.status !== 'ready') await once(r, 'ready') }))

  const db = await testDatabase(t)
  const one = await build(t, { db, redis: a })
  const two = await build(t, { db, redis: b, clock: one.clock })
  t.equal(one.app.rateLimitStore, 'redis')
  const admin = await one.signIn({ role: 'admin' })
  const key = await newKey(one, admin)

  const statuses = new Set<number>()
  for (let i = 0; i < 100; i++) statuses.add((await mcpCall(i % 2 === 0 ? one : two, key.secret)).statusCode)
  t.same([...statuses], [200], '100 requests spread over both instances pass')
  assertContract(t, 'POST', MCP, await mcpCall(one, key.secret))
  const onTwo = await mcpCall(two, key.secret)
  t.equal(onTwo.statusCode, 429, 'the limit is shared: the other instance refuses too')
  t.equal(onTwo.json().code, 'RATE_LIMITED')
  t.ok(Number(onTwo.headers['retry-after']) >= 1, 'Retry-After')

  const stored = await plain.keys(`${prefix}*${key.id}`)
  t.equal(stored.length, 1, 'the counter lives in Redis, under the run\'s prefix')
  t.equal(Number(await plain.get(stored[0] as string)), 102, 'one counter for both instances')
})

t.test('Redis going away at run time: fail-open to memory, then back to the shared counter', { skip }, async t => {
  const target = new URL(TEST_REDIS_URL as string)
  const proxy = await startTcpProxy(t, { host: target.hostname, port: Number(target.port || 6379) })
  const plain = new Redis(TEST_REDIS_URL as string)
  let apiKeyId = ''
  t.teardown(async () => {
    if (apiKeyId !== '') await deleteKeys(plain, `workspace-service:rl:*key:${apiKeyId}`)
    plain.disconnect()
  })
  // The production client (REDIS_URL), through a proxy the test can cut.
  const h = await build(t, { env: { REDIS_URL: `redis://127.0.0.1:${proxy.port}${target.pathname}` } })
  const admin = await h.signIn({ role: 'admin' })
  const key = await newKey(h, admin)
  apiKeyId = key.id
  const counter = async () => {
    const [k] = await plain.keys(`workspace-service:rl:*key:${apiKeyId}`)
    return k === undefined ? 0 : Number(await plain.get(k))
  }

  for (let i = 0; i < 30; i++) t.equal((await mcpCall(h, key.secret)).statusCode, 200, `up: ${i + 1}`)
  t.equal(await counter(), 30, 'counted in Redis')

  proxy.down()
  for (let i = 0; i < 10; i++) {
    const started = performance.now()
    const res = await mcpCall(h, key.secret)
    t.equal(res.statusCode, 200, `Redis down: request ${i + 1} passes`)
    t.ok(performance.now() - started < 2000, 'without waiting for Redis')
  }
  t.equal(await counter(), 30, 'nothing reached Redis meanwhile')

  const reconnected = proxy.connected()
  proxy.up()
  // ioredis reconnects by itself (back-off up to 5 s); requests meanwhile are counted in memory.
  await reconnected
  // Connected; until its handshake is done a request may still be counted in memory.
  const deadline = Date.now() + 15_000
  while (await counter() === 30 && Date.now() < deadline) await mcpCall(h, key.secret)
  t.equal(await counter(), 31, 'back: the shared counter continues where it was')
  const statuses = new Set<number>()
  for (let i = 0; i < 69; i++) statuses.add((await mcpCall(h, key.secret)).statusCode)
  t.same([...statuses], [200], 'up to 100 in Redis')
  t.equal((await mcpCall(h, key.secret)).statusCode, 429, 'the 101st counted in Redis is refused')
})
