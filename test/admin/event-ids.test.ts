import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// Tenant side channel: audit and event ids were one bigserial across every workspace, so the gap
// between two of a workspace's own ids counted the other workspaces' actions. They are UUIDv7s:
// time, then random bits; the trail and the feed still page in order, and the migration renumbers
// existing rows (and the deliveries that name them) without keeping the old numbers.

const UUID_V7 = /^([0-9a-f]{8})-([0-9a-f]{4})-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const msOf = (id: string): number => {
  const m = UUID_V7.exec(id)
  return m === null ? NaN : parseInt(`${m[1]}${m[2]}`, 16)
}

/** An API key made and revoked: two events (a workspace holds at most 10 live keys). */
async function apiKeyCreated (h: TestApp, admin: SignedIn, name: string): Promise<void> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { name, scopes: ALL_SCOPES }
  })
  if (res.statusCode !== 201) throw new Error(`POST /api/api-keys: ${res.statusCode} ${res.body}`)
  const gone = await h.inject({ method: 'DELETE', url: `/api/api-keys/${res.json().id}`, headers: { cookie: admin.cookie } })
  if (gone.statusCode !== 204) throw new Error(`DELETE /api/api-keys: ${gone.statusCode} ${gone.body}`)
}

t.test('a workspace\'s ids say nothing about another workspace\'s activity', async t => {
  const h = await build(t)
  const a = await h.signIn({ role: 'admin' })
  const b = await h.signIn({ role: 'admin' })
  await apiKeyCreated(h, a, 'first')
  for (let i = 0; i < 5; i++) await apiKeyCreated(h, b, `other ${i}`)
  h.clock.advance(1)
  await apiKeyCreated(h, a, 'second')
  const trail = await h.inject({ method: 'GET', url: '/api/audit-events', headers: { cookie: a.cookie } })
  assertContract(t, 'GET', '/api/audit-events', trail)
  const items = trail.json().items as Array<{ id: string, createdAt: string }>
  t.equal(items.length, 4)
  for (const e of items) {
    t.match(e.id, UUID_V7, `${e.id} is a UUIDv7, not a number shared by every workspace`)
    t.equal(msOf(e.id), Date.parse(e.createdAt), 'its time is the event\'s own')
  }
  const feed = await h.inject({ method: 'GET', url: '/api/events', headers: { cookie: a.cookie } })
  assertContract(t, 'GET', '/api/events', feed)
  t.same((feed.json().items as Array<{ id: string }>).map(e => e.id), items.map(e => `evt_${e.id}`).reverse(),
    'the feed names the same events, oldest first')
})

t.test('the trail and the feed page in order, many events within one millisecond', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  // The fake clock does not move: every event has the same time, the counter orders them.
  for (let i = 0; i < 23; i++) await apiKeyCreated(h, admin, `key ${String(i).padStart(2, '0')}`)
  const pageThrough = async (path: string, param: string, reverse: boolean): Promise<string[]> => {
    const names: string[] = []
    let cursor: string | null = null
    for (let n = 0; n < 20; n++) {
      const url: string = `${path}?limit=5${cursor !== null ? `&${param}=${cursor}` : ''}`
      const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
      t.equal(res.statusCode, 200, url)
      type Item = { payload?: { name: string }, data?: { name: string } }
      const body = res.json() as { items: Item[], nextCursor: string | null }
      names.push(...body.items.map(e => (e.payload ?? e.data)?.name ?? ''))
      if (body.items.length === 0 || body.nextCursor === null || body.nextCursor === cursor) break
      cursor = body.nextCursor
    }
    return reverse ? names.reverse() : names
  }
  const expected = Array.from({ length: 23 }, (_, i) => `key ${String(i).padStart(2, '0')}`).flatMap(k => [k, k])
  t.same(await pageThrough('/api/audit-events', 'cursor', true), expected, 'audit trail: newest first, in order')
  t.same(await pageThrough('/api/events', 'after', false), expected, 'events feed: oldest first, in order')
})

t.test('the migration renumbers existing rows: order kept per workspace, deliveries follow', async t => {
  const db = await openDatabase({ url: null, dataDir: null })
  t.teardown(async () => { await db.close() })
  const all = loadMigrations()
  await migrate(db, { migrations: all.filter(m => m.version < 12) })
  const ws = async (name: string): Promise<string> => (await db.query<{ id: string }>(
    'INSERT INTO workspaces (name, created_at) VALUES ($1, now()) RETURNING id', [name])).rows[0]?.id ?? ''
  const [w1, w2] = [await ws('one'), await ws('two')]
  // Interleaved, several in one millisecond, and one workspace's rows out of time order by id.
  const at = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z']
  let n = 0
  for (const t0 of at) {
    for (const w of [w1, w2, w1]) {
      await db.query(
        `INSERT INTO audit_events (workspace_id, action, actor_type, payload, created_at, event_type)
         VALUES ($1, 'api_key.created', 'system', $2, $3, 'api_key.created')`, [w, JSON.stringify({ n: n++ }), t0])
    }
  }
  const endpoint = (await db.query<{ id: string }>(
    `INSERT INTO webhook_endpoints (workspace_id, url, secret_enc, created_at, updated_at)
     VALUES ($1, 'https://example.com/hook', 'x', now(), now()) RETURNING id`, [w1])).rows[0]?.id
  await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, workspace_id, event_id, event_type, created_at, updated_at)
     SELECT $1, $2, id, 'api_key.created', now(), now() FROM audit_events WHERE payload->>'n' = '3'`, [endpoint, w1])
  const before = async (w: string) => (await db.query<{ n: string }>(
    'SELECT payload->>\'n\' AS n FROM audit_events WHERE workspace_id = $1 ORDER BY id', [w])).rows.map(r => r.n)
  const order1 = await before(w1)
  const order2 = await before(w2)

  await migrate(db, { migrations: all })
  const rows = (await db.query<{ id: string, n: string, createdAt: Date }>(
    'SELECT id::text AS id, payload->>\'n\' AS n, created_at AS "createdAt" FROM audit_events')).rows
  t.equal(rows.length, 9)
  for (const r of rows) {
    t.match(r.id, UUID_V7, `row ${r.n}: a UUIDv7`)
    t.equal(msOf(r.id), r.createdAt.getTime(), `row ${r.n}: its time is its created_at`)
  }
  t.same(await before(w1), order1, 'workspace one: same order')
  t.same(await before(w2), order2, 'workspace two: same order')
  const delivery = (await db.query<{ n: string }>(
    'SELECT a.payload->>\'n\' AS n FROM webhook_deliveries d JOIN audit_events a ON a.id = d.event_id')).rows
  t.same(delivery, [{ n: '3' }], 'the delivery names the same event')
  const made = (await db.query<{ id: string }>(
    `INSERT INTO audit_events (workspace_id, action, actor_type, created_at) VALUES ($1, 'session.login', 'system', now())
     RETURNING id::text AS id`, [w2])).rows[0]?.id ?? ''
  t.match(made, UUID_V7, 'a row written by SQL alone gets a UUIDv7 too')
})
