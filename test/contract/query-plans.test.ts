import t from 'tap'
import type { Database, Queryable } from '../../src/db/client.js'
import { listActiveApiKeys } from '../../src/db/api-keys.js'
import { listAuditEvents, listEvents } from '../../src/db/audit-events.js'
import { invitationFunnel, listInvitations, type InvitationStatus } from '../../src/db/invitations.js'
import { listInviteRequests, type InviteRequestStatus } from '../../src/db/invite-requests.js'
import { listUsers } from '../../src/db/users.js'
import { listDeliveries } from '../../src/db/webhook-deliveries.js'
import { listWebhookEndpoints } from '../../src/db/webhook-endpoints.js'
import {
  seedApiKeys, seedAuditEvents, seedInvitations, seedInviteRequests, seedMembers, seedWebhooks, seedWorkspaces
} from '../../bench/scale-seed.js'
import { build, testDatabase } from '../helpers/build.js'
import { deref } from '../helpers/contract.js'
import { createApiKey } from '../helpers/mcp.js'
import { planOf, recording, type Sent } from '../helpers/plans.js'
import { loadContract } from '../../src/app.js'

// Every list the API pages through reads its rows through an index, in the index's order: the
// plan (not a time) of each list statement, on a database with enough rows that a sequential scan
// would win were there no fitting index (a few hundred workspaces, one of them with thousands of
// rows in every listed table; ANALYZE). The statements are the repositories' own: each list
// function runs once through a Queryable that records what it sends, and that text is EXPLAINed
// with the same parameters (a custom plan, as the service's unnamed statements get). PGlite by
// default, PostgreSQL with TEST_DATABASE_URL.
//
// Two parts. The cases below name, for each list statement of the repositories, the index that
// fits it (and the events feed's probe of its horizon). Then the sweep at the end derives its
// statements instead of listing them: every list operation of the contract (a GET whose answer
// has `items`) is called through the app on this database, with each of its query parameters
// and a later page, and every statement the app sends meanwhile must read the large tables
// through an index. A new list operation, or new SQL behind an existing one, is checked there
// without editing this file.

const SCANS = new Set(['Index Scan', 'Index Only Scan', 'Bitmap Index Scan'])

// Seeding inserts up to 44,000 rows in one statement: more than the service's 5-second statement
// limit allows on a slow machine under coverage (CI cut it once), so this database has a long one.
const db = await testDatabase(t, { queryTimeoutMs: 120_000 })
const now = new Date()
// 101 workspaces: a big one and 100 typical ones with a tenth of its rows each, in every listed table.
const workspaces = await seedWorkspaces(db, { count: 101, now })
const big = workspaces[0] as string
const others = workspaces.slice(1)
const DAY = 86_400
for (const [ids, n] of [[[big], 1], [others, 10]] as const) {
  // n: how much sparser the typical ones are (the same time span, a tenth of the rows)
  await seedMembers(db, { workspaceIds: ids, count: 1500 / n, now })
  await seedInvitations(db, { workspaceIds: ids, from: 0, to: 4000 / n, now, stepSeconds: 1800 * n })
  await seedInviteRequests(db, { workspaceIds: ids, from: 0, to: 1500 / n, now, stepSeconds: DAY / 10 * n })
  await seedAuditEvents(db, { workspaceIds: ids, from: 0, to: 4000 / n, now, stepSeconds: 1800 * n })
  await seedWebhooks(db, { workspaceIds: ids, perWorkspace: 5, withDeliveries: n === 1 ? 2 : 1, now })
}
await seedApiKeys(db, { workspaceIds: workspaces, perWorkspace: 20, now })
// An invitation batch per workspace: the big one's of 1,000 rows, the others' of 100.
for (const [i, id] of workspaces.entries()) {
  const batch = (await db.query<{ id: string }>(
    `INSERT INTO invitation_batches (workspace_id, actor, status, total, created_at)
     VALUES ($1, '{}'::jsonb, 'completed', $2, $3) RETURNING id`, [id, i === 0 ? 1000 : 100, now])).rows[0] as { id: string }
  await db.query(
    `INSERT INTO invitation_batch_rows (batch_id, position, email, role, result, delivery)
     SELECT $1, g, 'row' || g || '@example.com', 'member', 'invited', 'sent' FROM generate_series(0, $2 - 1) g`,
    [batch.id, i === 0 ? 1000 : 100])
}
await db.query('ANALYZE')

interface Position { createdAt: Date, id: string }

/** What the lists of one workspace are asked with: a member, an endpoint, a position mid-list in each. */
interface Fixture {
  label: string
  id: string
  member: string
  endpoint: string
  batch: string
  middle: { invitations: Position, requests: Position, users: Position, deliveries: Position, event: string }
}

async function fixture (label: string, id: string): Promise<Fixture> {
  const one = async <R>(sql: string, params: unknown[]): Promise<R> => (await db.query<R>(sql, params)).rows[0] as R
  const member = await one<{ id: string }>(
    "SELECT id FROM users WHERE workspace_id = $1 AND role = 'member' AND status = 'active' LIMIT 1", [id])
  const endpoint = await one<{ id: string }>(
    'SELECT endpoint_id AS id FROM webhook_deliveries WHERE workspace_id = $1 LIMIT 1', [id])
  // A later page's cursor: the row half-way down the list.
  const middle = async (table: string, column: string, key: string): Promise<Position> => await one<Position>(
    `SELECT created_at AS "createdAt", id FROM ${table} WHERE ${column} = $1 ORDER BY created_at DESC, id DESC
      OFFSET (SELECT count(*) / 2 FROM ${table} WHERE ${column} = $1) LIMIT 1`, [key])
  const event = await one<{ id: string }>(
    `SELECT id::text AS id FROM audit_events WHERE workspace_id = $1 ORDER BY id
      OFFSET (SELECT count(*) / 2 FROM audit_events WHERE workspace_id = $1) LIMIT 1`, [id])
  const batch = await one<{ id: string }>('SELECT id FROM invitation_batches WHERE workspace_id = $1 LIMIT 1', [id])
  return {
    label,
    id,
    member: member.id,
    endpoint: endpoint.id,
    batch: batch.id,
    middle: {
      invitations: await middle('invitations', 'workspace_id', id),
      requests: await middle('invite_requests', 'workspace_id', id),
      users: await middle('users', 'workspace_id', id),
      deliveries: await middle('webhook_deliveries', 'endpoint_id', endpoint.id),
      event: event.id
    }
  }
}

interface ListCase {
  name: string
  table: string
  /**
   * The indexes that fit the list (any will do): its own, or one whose leading columns are the
   * list's equality filter (a pending list reads the partial index of pending rows, a few days' worth).
   */
  indexes: string[]
  /** Indexes the statement must read as well (a subquery's). */
  requires?: string[]
  run: (q: Queryable, w: Fixture) => Promise<unknown>
}

const later = (paged: boolean): string => paged ? ', a later page' : ''
const invitationStatuses: Array<InvitationStatus | undefined> = [undefined, 'pending', 'accepted', 'revoked', 'expired']
const requestStatuses: Array<InviteRequestStatus | undefined> = [undefined, 'pending', 'approved', 'denied', 'expired']
const since = new Date(now.getTime() - 30 * DAY * 1000)
const TARGET = '3f0c1d52-7d0e-4d8b-9a57-2b0b0e4a0c11'

const cases: ListCase[] = [
  ...invitationStatuses.flatMap(status => [false, true].map(paged => ({
    name: `invitations, status ${status ?? 'any'}${later(paged)}`,
    table: 'invitations',
    indexes: ['invitations_workspace_idx', 'invitations_workspace_status_idx', 'invitations_one_pending'],
    run: async (q: Queryable, w: Fixture) => await listInvitations(q, {
      workspaceId: w.id, status, now, limit: 51, before: paged ? w.middle.invitations : undefined
    })
  }))),
  ...requestStatuses.flatMap(status => [false, true].map(paged => ({
    name: `invite requests, status ${status ?? 'any'}${later(paged)}`,
    table: 'invite_requests',
    indexes: ['invite_requests_workspace_idx', 'invite_requests_one_pending'],
    run: async (q: Queryable, w: Fixture) => await listInviteRequests(q, {
      workspaceId: w.id, status, now, limit: 51, before: paged ? w.middle.requests : undefined
    })
  }))),
  {
    name: "invite requests, a member's own",
    table: 'invite_requests',
    indexes: ['invite_requests_workspace_idx'],
    run: async (q, w) => await listInviteRequests(q, { workspaceId: w.id, requestedBy: w.member, now, limit: 51 })
  },
  ...[false, true].map(paged => ({
    name: `members${later(paged)}`,
    table: 'users',
    indexes: ['users_workspace_idx'],
    run: async (q: Queryable, w: Fixture) => await listUsers(q, w.id, {
      limit: 51, after: paged ? w.middle.users : undefined
    })
  })),
  ...[{ search: 'm12' }, { role: 'admin' as const }, { search: 'member 12', role: 'member' as const }].map(filter => ({
    name: `members, ${Object.keys(filter).join(' and ')}`,
    table: 'users',
    indexes: ['users_workspace_idx', 'users_workspace_email_prefix_idx', 'users_workspace_name_prefix_idx'],
    run: async (q: Queryable, w: Fixture) => await listUsers(q, w.id, { limit: 51, ...filter })
  })),
  ...[7, 30, 365].map(days => ({
    name: `invitation funnel, ${days} days`,
    table: 'invitations',
    // its own (index-only once vacuumed), or the list's on a table not vacuumed yet (as here)
    indexes: ['invitations_funnel_idx', 'invitations_workspace_idx'],
    run: async (q: Queryable, w: Fixture) => await invitationFunnel(q, {
      workspaceId: w.id, since: new Date(now.getTime() - days * DAY * 1000), until: now, now
    })
  })),
  {
    name: 'API keys',
    table: 'api_keys',
    indexes: ['api_keys_workspace_idx'],
    run: async (q, w) => await listActiveApiKeys(q, w.id)
  },
  {
    name: 'webhook endpoints',
    table: 'webhook_endpoints',
    indexes: ['webhook_endpoints_workspace_idx'],
    run: async (q, w) => await listWebhookEndpoints(q, w.id)
  },
  ...[undefined, 'failed' as const].flatMap(status => [false, true].map(paged => ({
    name: `webhook deliveries, status ${status ?? 'any'}${later(paged)}`,
    table: 'webhook_deliveries',
    indexes: ['webhook_deliveries_endpoint_idx', 'webhook_deliveries_endpoint_id_event_id_key'],
    run: async (q: Queryable, w: Fixture) => await listDeliveries(q, {
      endpointId: w.endpoint, status, before: paged ? w.middle.deliveries : undefined, limit: 51
    })
  }))),
  ...[false, true].flatMap(paged => [null, ['invitation.created']].map(types => ({
    name: `events feed${paged ? ', after a cursor' : ''}${types !== null ? ', by type' : ''}`,
    table: 'audit_events',
    // in id order, or the horizon's events (few in a typical workspace) then sorted
    indexes: ['audit_events_feed_idx', 'audit_events_feed_time_idx'],
    // where the read starts: the first event within the horizon
    requires: ['audit_events_feed_time_idx'],
    run: async (q: Queryable, w: Fixture) => await listEvents(q, {
      workspaceId: w.id, after: paged ? w.middle.event : null, since, types, limit: 51
    })
  }))),
  ...[false, true].map(paged => ({
    name: `audit trail${later(paged)}`,
    table: 'audit_events',
    indexes: ['audit_events_workspace_idx'],
    run: async (q: Queryable, w: Fixture) => await listAuditEvents(q, {
      workspaceId: w.id, before: paged ? w.middle.event : undefined, limit: 51
    })
  })),
  {
    name: 'audit trail, by action',
    table: 'audit_events',
    indexes: ['audit_events_workspace_idx'],
    run: async (q, w) => await listAuditEvents(q, { workspaceId: w.id, action: 'session.login', limit: 51 })
  },
  {
    name: "audit trail, one target's",
    table: 'audit_events',
    indexes: ['audit_events_target_idx'],
    run: async (q, w) => await listAuditEvents(q, {
      workspaceId: w.id, targetType: 'invitation', targetId: TARGET, limit: 51
    })
  }
]

// The audit trail and the events feed are in id order, which the primary key has too: in the big
// workspace (a tenth of all events) the planner may walk the primary key and skip other
// workspaces' rows, which costs about ten rows read per row listed.
const BIG_ALSO: Record<string, string[]> = { audit_events: ['audit_events_pkey'] }

for (const w of [await fixture('a typical workspace', others[0] as string), await fixture('the big workspace', big)]) {
  for (const c of cases) {
    t.test(`${c.name}: ${w.label}`, async t => {
      const { q, sent } = recording(db)
      await c.run(q, w)
      t.equal(sent.length, 1, 'one statement')
      const nodes = await planOf(db, sent[0] as Sent)
      const fits = [...c.indexes, ...(w.id === big ? BIG_ALSO[c.table] ?? [] : [])]
      const onTable = nodes.filter(n => n['Relation Name'] === c.table || fits.includes(n['Index Name'] ?? ''))
      const shape = nodes.map(n => `${n['Node Type']}${n['Index Name'] !== undefined ? ` (${n['Index Name']})` : ''}`)
      t.notOk(onTable.some(n => n['Node Type'] === 'Seq Scan'), `no sequential scan of ${c.table}: ${shape.join(' > ')}`)
      t.ok(
        onTable.some(n => SCANS.has(n['Node Type']) && fits.includes(n['Index Name'] ?? '')),
        `read through ${fits.join(' or ')}: ${shape.join(' > ')}`
      )
      for (const index of c.requires ?? []) {
        t.ok(nodes.some(n => SCANS.has(n['Node Type']) && n['Index Name'] === index), `and ${index}: ${shape.join(' > ')}`)
      }
    })
  }
}

// The sweep: every list operation, derived from the contract, through the app.

interface Param { name: string, in: string, example?: unknown, schema?: Schema }
interface Schema { $ref?: string, enum?: unknown[], type?: string, items?: Schema, properties?: Record<string, Schema> }
interface Operation {
  operationId: string
  parameters?: Array<Param | { $ref: string }>
  responses: Record<string, unknown>
}
const contract = loadContract() as { paths: Record<string, Record<string, Operation>> }
const listOperations = Object.entries(contract.paths).flatMap(([path, item]) => {
  const op = item.get
  if (op === undefined) return []
  const ok = deref(op.responses['200'] as { content?: Record<string, { schema: Schema }> } | undefined)
  const body = ok?.content?.['application/json']?.schema
  return body !== undefined && deref(body).properties?.items !== undefined ? [{ path, op }] : []
})

/** Values of each path parameter in a workspace: the lists under a resource need one of its ids. */
const PATH_VALUES: Record<string, (w: Fixture) => string> = { endpointId: w => w.endpoint, batchId: w => w.batch }
/** The parameter a list takes its next page's position in (`nextCursor` goes there). */
const CURSORS = ['cursor', 'after']

/** The requests that exercise a list: bare, each query parameter alone (each enum value), a later page. */
function variants (op: Operation): Array<Record<string, string>> {
  const params = (op.parameters ?? []).map(p => deref<Param>(p)).filter(p => p.in === 'query')
  const out: Array<Record<string, string>> = [{ limit: '51' }]
  for (const p of params) {
    if (p.name === 'limit' || CURSORS.includes(p.name)) continue
    const schema = p.schema !== undefined ? deref(p.schema) : undefined
    // an enum: each value; an array of an enum (the feed's types): its first; otherwise the example
    const itemEnum = schema?.items !== undefined ? deref(schema.items).enum?.slice(0, 1) : undefined
    const values = schema?.enum ?? itemEnum ?? [p.example]
    for (const v of values) if (v !== undefined) out.push({ limit: '51', [p.name]: String(v) })
  }
  return out
}

/**
 * The test's database as the app's, each statement recorded while `record` runs a request (the
 * app outlives nothing: the test's database is closed by the test).
 */
function recordedDatabase (): { appDb: Database, record: <T>(into: Sent[], fn: () => Promise<T>) => Promise<T> } {
  let sent: Sent[] | null = null
  const keep = (text: string, params: readonly unknown[] | undefined): void => {
    sent?.push({ text, params: params ?? [] })
  }
  const recorded = (q: Queryable): Queryable => ({
    query: async (text, params) => { keep(text, params); return await q.query(text, params) },
    exec: async text => { await q.exec(text) },
    ...(q.afterCommit !== undefined ? { afterCommit: q.afterCommit } : {})
  })
  const appDb: Database = {
    ...recorded(db),
    kind: db.kind,
    transaction: async fn => await db.transaction(async tx => await fn(recorded(tx))),
    ping: async () => { await db.ping() },
    poolStats: () => db.poolStats(),
    close: async () => {} // the test's database outlives the app
  }
  const record = async <T>(into: Sent[], fn: () => Promise<T>): Promise<T> => {
    sent = into
    try { return await fn() } finally { sent = null }
  }
  return { appDb, record }
}

const LARGE_ROWS = 1000

t.test('every statement of every list operation reads the large tables through an index', async t => {
  t.ok(listOperations.length >= 7, `the list operations, from the contract: ${listOperations.map(l => l.path).join(', ')}`)
  const large = new Set((await db.query<{ relname: string }>(
    "SELECT relname FROM pg_class WHERE relkind = 'r' AND reltuples >= $1 AND relnamespace = to_regnamespace(current_schema())",
    [LARGE_ROWS]
  )).rows.map(r => r.relname))
  t.ok(large.has('invitations') && large.has('audit_events'), `the large tables: ${[...large].join(', ')}`)

  const { appDb, record } = recordedDatabase()
  const h = await build(t, { db: appDb })
  const jobsSchema = h.config.jobs.schema
  let checked = 0

  for (const w of [await fixture('a typical workspace', others[0] as string), await fixture('the big workspace', big)]) {
    const admin = await h.signIn({ role: 'admin', workspaceId: w.id })
    for (const { path, op } of listOperations) {
      const url = path.replace(/\{(\w+)\}/g, (_, name: string) => {
        const value = PATH_VALUES[name]
        if (value === undefined) throw new Error(`${op.operationId}: no value for the path parameter ${name}: add it to PATH_VALUES`)
        return value(w)
      })
      for (const query of variants(op)) {
        const statements: Sent[] = []
        const get = async (q: Record<string, string>): Promise<{ nextCursor?: string | null }> => {
          const res = await record(statements, async () => await h.inject({
            method: 'GET', url: `${url}?${new URLSearchParams(q).toString()}`, headers: { cookie: admin.cookie }
          }))
          t.equal(res.statusCode, 200, `${op.operationId} ${new URLSearchParams(q).toString()}: ${w.label}`)
          return res.json()
        }
        const first = await get(query)
        const cursor = CURSORS.find(c => (op.parameters ?? []).some(p => deref<Param>(p).name === c))
        if (typeof first.nextCursor === 'string' && cursor !== undefined) await get({ ...query, [cursor]: first.nextCursor })
        for (const statement of statements) {
          if (statement.text.includes(`${jobsSchema}.`)) continue // the job engine's own, woken meanwhile
          const nodes = await planOf(db, statement)
          checked++
          const seq = nodes.filter(n => n['Node Type'] === 'Seq Scan' && large.has(n['Relation Name'] ?? ''))
          const shape = nodes.map(n => `${n['Node Type']}${n['Index Name'] !== undefined ? ` (${n['Index Name']})` : n['Relation Name'] !== undefined ? ` (${n['Relation Name']})` : ''}`)
          t.same(seq.map(n => n['Relation Name']), [],
            `${op.operationId} ${new URLSearchParams(query).toString()}, ${w.label}: ${statement.text.replace(/\s+/g, ' ').slice(0, 80)} → ${shape.join(' > ')}`)
        }
      }
    }
  }
  t.ok(checked > 50, `${checked} statements EXPLAINed`)
})

// A company directory's lookups (SCIM, RFC 7644 §3.4.2.2): before it creates each person Okta
// asks for them by userName, Entra ID by externalId or address, either by id. The contract's SCIM
// lists are not `items` lists, so the sweep above does not reach them: each lookup reads users
// through the index that fits it, and a page reads its members' groups in one statement.

const SCIM_LOOKUPS: Array<{ filter: (member: { id: string, email: string }) => string, indexes: string[] }> = [
  // userName is compared case-insensitively: lower() of what the unique index is built on
  { filter: m => `userName eq "${m.email.toUpperCase()}"`, indexes: ['users_directory_user_name_key'] },
  { filter: () => 'userName eq "nobody@example.com"', indexes: ['users_directory_user_name_key'] },
  { filter: () => 'externalId eq "00u1ab2cd3EF4gh5ij6"', indexes: ['users_directory_external_id_key'] },
  // addresses are stored in lower case: no lower() on the column, so its index serves
  { filter: m => `emails.value eq "${m.email.toUpperCase()}"`, indexes: ['users_workspace_email_idx', 'users_email_key'] },
  { filter: m => `emails[type eq "work" and value eq "${m.email}"]`, indexes: ['users_workspace_email_idx', 'users_email_key'] },
  { filter: m => `id eq "${m.id}"`, indexes: ['users_pkey'] },
  { filter: m => `userName eq "${m.email}" and active eq true`, indexes: ['users_directory_user_name_key'] }
]

t.test('SCIM: a directory\'s lookups read users through their index; a page reads its groups in one statement', async t => {
  const { appDb, record } = recordedDatabase()
  const h = await build(t, { db: appDb })
  for (const w of [await fixture('a typical workspace', others[0] as string), await fixture('the big workspace', big)]) {
    const admin = await h.signIn({ role: 'admin', workspaceId: w.id })
    const key = await createApiKey(h, admin, 'Okta', ['scim'])
    const scim = async (url: string, into: Sent[] = []) => await record(into, async () => await h.inject({
      method: 'GET', url, headers: { authorization: `Bearer ${key.secret}` }
    }))
    const member = (await db.query<{ id: string, email: string }>(
      'SELECT id, email FROM users WHERE id = $1', [w.member])).rows[0] as { id: string, email: string }
    for (const lookup of SCIM_LOOKUPS) {
      const filter = lookup.filter(member)
      const statements: Sent[] = []
      const res = await scim(`/api/scim/v2/Users?filter=${encodeURIComponent(filter)}`, statements)
      t.equal(res.statusCode, 200, `${filter}: ${w.label}`)
      const reads: Sent[] = []
      for (const statement of statements.filter(s => /\bFROM users\b/.test(s.text) && !/api_keys/.test(s.text))) {
        const nodes = await planOf(db, statement)
        const shape = nodes.map(n => `${n['Node Type']}${n['Index Name'] !== undefined ? ` (${n['Index Name']})` : ''}`)
        // the page and its count each read users through a fitting index, never a scan of the table
        const indexes = nodes.filter(n => (n['Index Name'] ?? '').startsWith('users_')).map(n => n['Index Name'] ?? '')
        t.ok(!nodes.some(n => n['Node Type'] === 'Seq Scan') && indexes.length > 0 &&
          indexes.every(i => lookup.indexes.includes(i)),
        `${filter}, ${w.label}: users through ${lookup.indexes.join(' or ')}: ${shape.join(' > ')}`)
        reads.push(statement)
      }
      t.equal(reads.length, 1, `${filter}, ${w.label}: one statement reads the page and its count`)
    }

    // Groups: the member and two others in a group; a page of 1 and one of 100 cost as many statements.
    const three = (await db.query<{ id: string }>(
      "SELECT id FROM users WHERE workspace_id = $1 AND status = 'active' ORDER BY created_at, id LIMIT 3", [w.id])).rows
    const created = await h.inject({
      method: 'POST',
      url: '/api/scim/v2/Groups',
      headers: { authorization: `Bearer ${key.secret}`, 'content-type': 'application/scim+json' },
      payload: JSON.stringify({ displayName: `Engineering ${w.label}`, members: three.map(u => ({ value: u.id })) })
    })
    t.equal(created.statusCode, 201)
    const count = async (n: number) => {
      const statements: Sent[] = []
      const res = await scim(`/api/scim/v2/Users?count=${n}`, statements)
      const body = res.json() as { Resources: Array<{ id: string, groups: unknown[] }> }
      t.equal(body.Resources.length, n)
      // What the request reads per member, if anything: users and their groups. (Counting every
      // statement recorded meanwhile counted, once in a PostgreSQL run, a statement of the app's
      // own background work that happened to run during one of the two requests.)
      const reading = (table: string) => statements.filter(s => new RegExp(`\\b(FROM|JOIN) ${table}\\b`).test(s.text)).length
      return {
        reads: { users: reading('users'), groups: reading('directory_group_members') },
        grouped: body.Resources.filter(r => r.groups.length > 0).map(r => r.id)
      }
    }
    const one = await count(1)
    const hundred = await count(100)
    t.same(hundred.grouped.sort(), three.map(u => u.id).sort(), `each member's groups: ${w.label}`)
    t.equal(one.reads.groups, 1, `a page reads its members' groups in one statement: ${w.label}`)
    t.same(hundred.reads, one.reads, `as many statements for 100 members as for one: ${w.label}`)
  }
})
