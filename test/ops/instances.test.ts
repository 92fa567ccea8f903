import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { once } from 'node:events'
import { Redis } from 'ioredis'
import { build, testDatabase, TEST_DATABASE_URL, TEST_REDIS_URL, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startFakeHttp, type FakeHttp, type FakeRequest } from '../helpers/fake-http.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { envelope, install, mention, sendEvent, slackEnv, startSlackFake } from '../helpers/slack.js'
import { idempotencyKey, invite } from '../helpers/invite.js'
import { until } from '../helpers/service-process.js'
import { startSmtp } from '../helpers/smtp.js'
import { createEventOutbox } from '../../src/events/outbox.js'
import type { EventOutbox } from '../../src/ports/event-outbox.js'
import { expireInvitations } from '../../src/invitations/expiry.js'
import { queueDueReminders } from '../../src/invitations/reminders.js'
import { startJobEngine } from '../../src/jobs/engine.js'
import { revokeSession } from '../../src/db/sessions.js'

// Every promise the service makes, kept with three instances on one PostgreSQL database and one
// Redis (issue 30): three apps in this process, as three processes would be — each its own pool,
// Redis client, job engine and memory — sharing nothing but the database, Redis, SESSION_SECRET
// and (for tests that move time) the clock.

const skip = TEST_DATABASE_URL === null || TEST_REDIS_URL === null
  ? 'TEST_DATABASE_URL and TEST_REDIS_URL are not both set; the cross-instance tests need PostgreSQL and Redis'
  : false

/** Poll interval of the trio's job workers: long, so a prompt pickup can only come from NOTIFY. */
const POLL_MS = 10_000
const INVITES_PER_HOUR = 3

const json = (cookie: string): Record<string, string> => ({ cookie, 'content-type': 'application/json' })
const hooks = (fake: FakeHttp): FakeRequest[] => fake.requests.filter(r => r.path === '/hook')

/** Redis clients as production's, under one random prefix per run; its keys are deleted after. */
async function sharedRedis (): Promise<() => Redis> {
  const url = TEST_REDIS_URL as string
  const prefix = `test:instances:${randomBytes(6).toString('hex')}:`
  const plain = new Redis(url)
  t.teardown(async () => {
    const keys = await plain.keys(`${prefix}*`)
    if (keys.length > 0) await plain.del(...keys)
    plain.disconnect()
  })
  return () => {
    const r = new Redis(
      url, { keyPrefix: prefix, enableOfflineQueue: false, commandTimeout: 500, maxRetriesPerRequest: 1 }
    )
    t.teardown(() => { r.disconnect() })
    return r
  }
}

/** Three instances of one service on a fresh database: a, b, c. */
async function three (env: Record<string, string>): Promise<TestApp[]> {
  const client = await sharedRedis()
  const db = await testDatabase(t)
  const apps: TestApp[] = []
  for (let i = 0; i < 3; i++) {
    const redis = client()
    // Connected before the first request: a call made while connecting would count in memory.
    if (redis.status !== 'ready') await once(redis, 'ready')
    apps.push(await build(t, { db, redis, env, ...(apps[0] !== undefined ? { clock: apps[0].clock } : {}) }))
  }
  return apps
}

const smtp = skip === false ? await startSmtp(t) : null
const slack = skip === false ? await startSlackFake(t) : null
const receiver = skip === false ? await startFakeHttp(t) : null
/** When each webhook request arrived (performance.now()). */
const arrivals: number[] = []
receiver?.on('POST /hook', () => {
  arrivals.push(performance.now())
  return { status: 204 }
})
const env = skip === false
  ? slackEnv(slack?.fake as FakeHttp, {
    SESSION_SECRET: 'three-instances-'.repeat(3),
    SMTP_URL: smtp?.url ?? '',
    INVITE_EMAILS_PER_HOUR: String(INVITES_PER_HOUR),
    JOBS_POLL_MS: String(POLL_MS),
    JOBS_MAINTENANCE_SECONDS: '1',
    WEBHOOK_TIMEOUT_MS: '2000'
  })
  : {}
const trio = skip === false ? await three(env) : []
const [a, b, c] = trio as [TestApp, TestApp, TestApp]
const at = (i: number): TestApp => trio[i % 3] as TestApp
t.equal(trio.length, skip === false ? 3 : 0, skip === false ? 'three instances on one database and one Redis' : 'skipped')

async function subscribe (admin: SignedIn, eventType: string) {
  return await a.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: json(admin.cookie),
    payload: { url: `${receiver?.url ?? ''}/hook`, eventTypes: [eventType] }
  })
}

t.test('the API-key limit is 100 a minute in total, not per instance', { skip }, async t => {
  const admin = await a.signIn()
  const key = await createApiKey(a, admin)
  const statuses = new Set<number>()
  for (let i = 0; i < 100; i++) statuses.add((await mcpRequest(at(i), key.secret)).statusCode)
  t.same([...statuses], [200], '100 requests spread over three instances pass')
  for (const h of trio) {
    const res = await mcpRequest(h, key.secret)
    t.equal(res.statusCode, 429, 'the 101st and after are refused by every instance')
    t.equal(res.json().code, 'RATE_LIMITED')
  }
})

t.test('the invitation e-mail budget is one budget across instances', { skip }, async t => {
  const admin = await a.signIn()
  const before = smtp?.messages.length ?? 0
  for (let i = 0; i < INVITES_PER_HOUR; i++) {
    const res = await invite(at(i), admin.cookie, { email: `budget${i}@example.com` })
    t.equal(res.statusCode, 200, `e-mail ${i + 1} on instance ${i % 3}`)
  }
  for (const h of trio) {
    const res = await invite(h, admin.cookie, { email: `over-${randomBytes(3).toString('hex')}@example.com` })
    t.equal(res.statusCode, 429, 'spent on every instance')
    t.equal(res.json().code, 'RATE_LIMITED')
    assertContract(t, 'POST', '/api/users/invite', res)
  }
  t.equal((smtp?.messages.length ?? 0) - before, INVITES_PER_HOUR, `${INVITES_PER_HOUR} e-mails in all`)
})

t.test('an Idempotency-Key replays from any instance; the work runs once', { skip }, async t => {
  const admin = await a.signIn()
  const before = smtp?.messages.length ?? 0
  const first = await invite(a, admin.cookie, { email: 'once@example.com' }, idempotencyKey('k-three'))
  t.equal(first.statusCode, 200)
  for (const h of [b, c]) {
    const again = await invite(h, admin.cookie, { email: 'once@example.com' }, idempotencyKey('k-three'))
    t.equal(again.statusCode, 200)
    t.same(again.json(), first.json(), 'the first answer, link included')
  }
  const other = await invite(c, admin.cookie, { email: 'other@example.com' }, idempotencyKey('k-three'))
  t.equal(other.statusCode, 422, 'the key with another request, on another instance')
  t.equal(other.json().code, 'IDEMPOTENCY_KEY_REUSED')
  t.equal((smtp?.messages.length ?? 0) - before, 1, 'one e-mail')
})

t.test('a webhook event is delivered once, whichever instance takes it', { skip }, async t => {
  const admin = await a.signIn()
  const ep = await subscribe(admin, 'member.role_changed')
  t.equal(ep.statusCode, 201)
  const n = 12
  const members = await Promise.all(
    Array.from({ length: n }, async () => await a.signIn({ role: 'member', workspaceId: admin.workspaceId }))
  )
  const before = hooks(receiver as FakeHttp).length
  const statuses = await Promise.all(members.map(async (m, i) => (await at(i).inject({
    method: 'PATCH', url: `/api/users/${m.userId}`, headers: json(admin.cookie), payload: { role: 'admin' }
  })).statusCode))
  t.same([...new Set(statuses)], [200], 'every change made, through the three instances')
  await until(`${n} deliveries`, async () => hooks(receiver as FakeHttp).length - before >= n || undefined, 20_000)
  // A fixed wait, kept: it proves that no duplicate arrives within it. A job two instances took
  // (the fault looked for) leaves no trace to await; the one that completes it hides the other.
  await new Promise(resolve => setTimeout(resolve, 1500))
  const ids = hooks(receiver as FakeHttp).slice(before).map(r => String(r.headers['webhook-id']))
  t.equal(ids.length, n, 'one request per event')
  t.equal(new Set(ids).size, n, 'no webhook-id twice')
})

/** An outbox whose jobs are queued by an engine on a's database that runs no workers. */
async function committingOnly (t: Test): Promise<EventOutbox> {
  // As create-admin's, or an instance whose workers are all busy: only the NOTIFY sent at commit
  // can wake a, b or c before their poll.
  const committer = await startJobEngine({
    db: a.db,
    log: a.app.log,
    schema: a.config.jobs.schema,
    pollSeconds: POLL_MS / 1000,
    expireSeconds: 30,
    maintenanceSeconds: 60,
    workers: false
  })
  t.teardown(async () => { await committer.stop() })
  return createEventOutbox(committer)
}

/** Commits one member.joined event; milliseconds from before its transaction to its webhook's arrival. */
async function commitToDelivery (outbox: EventOutbox, admin: SignedIn): Promise<number> {
  const before = arrivals.length
  const start = performance.now() // before the transaction: an upper bound
  await a.db.transaction(async tx => {
    await outbox.record(tx, {
      workspaceId: admin.workspaceId,
      action: 'member.joined',
      actor: { type: 'system', id: null, label: 'test', source: 'system', requestId: null },
      target: { type: 'user', id: admin.userId },
      now: a.clock.now()
    })
  })
  return await until('the delivery', async () => arrivals[before], POLL_MS) - start
}

t.test('a job committed where no worker runs is picked up by another instance at once, not at its poll', { skip }, async t => {
  const outbox = await committingOnly(t)
  const admin = await a.signIn()
  t.equal((await subscribe(admin, 'member.joined')).statusCode, 201)
  // Every worker has done its first fetch and sleeps its 10 s poll. A fixed wait, kept: the test is
  // about that timing, and no worker says when it is between two fetches.
  await new Promise(resolve => setTimeout(resolve, 500))
  const pickups: number[] = []
  for (let i = 0; i < 5; i++) pickups.push(await commitToDelivery(outbox, admin))
  t.ok(Math.max(...pickups) < 3000, `commit to delivery ${pickups.map(ms => Math.round(ms)).join(', ')} ms, poll ${POLL_MS} ms`)
})

t.test('a LISTEN connection cut by the server is remade, and jobs are again picked up at once', { skip }, async t => {
  const outbox = await committingOnly(t)
  const admin = await a.signIn()
  t.equal((await subscribe(admin, 'member.joined')).statusCode, 201)
  const listening = `LISTEN "jobs:${a.config.jobs.schema}"`
  // This test's database only: other test files' apps on the same server listen on the same
  // channel name (each test copies its own database; the schema keeps its default name).
  const cut = await a.db.query<{ n: number }>(
    'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE query = $1 AND datname = current_database()',
    [listening]
  )
  t.equal(cut.rows[0]?.n, 3, 'the three instances\' LISTEN connections terminated')
  await until('listening again', async () => (await a.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = $1 AND datname = current_database()', [listening]
  )).rows[0]?.n === 3 || undefined, 10_000)
  const took = await commitToDelivery(outbox, admin)
  t.ok(took < 3000, `commit to delivery ${Math.round(took)} ms after the reconnection, poll ${POLL_MS} ms`)
})

t.test('reminders are claimed once across instances', { skip }, async t => {
  const admin = await a.signIn()
  const n = 6
  const now = a.clock.now().getTime()
  // Sent four days ago, expiring in one: due under the workspace's default of 2 days before expiry.
  for (let i = 0; i < n; i++) {
    await a.db.query(
      `INSERT INTO invitations (workspace_id, email, role, token_hash, invited_by, created_at, updated_at, expires_at,
                                last_sent_at, delivery_status, link_sealed)
       VALUES ($1, $2, 'member', $3, $4, $5, $5, $6, $5, 'sent', 'sealed')`,
      [admin.workspaceId, `remind${i}@example.com`, randomBytes(16).toString('hex'), admin.userId,
        new Date(now - 4 * 86_400_000), new Date(now + 86_400_000)]
    )
  }
  const claimed = await Promise.all(trio.map(async h => await queueDueReminders(h.app.services.ports)))
  t.equal(claimed.reduce((x, y) => x + y, 0), n, `the three sweeps claimed ${claimed.join(' + ')} = ${n}`)
  const events = await a.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE workspace_id = $1 AND action = 'invitation.reminder_sent'",
    [admin.workspaceId]
  )
  t.equal(events.rows[0]?.n, n, 'one invitation.reminder_sent event each')
  t.same(await Promise.all(trio.map(async h => await queueDueReminders(h.app.services.ports))), [0, 0, 0], 'and none again')
})

t.test('expiry and retention run once across instances', { skip }, async t => {
  const admin = await a.signIn()
  const n = 5
  const past = new Date(a.clock.now().getTime() - 1000)
  for (let i = 0; i < n; i++) {
    await a.db.query(
      `INSERT INTO invitations (workspace_id, email, role, token_hash, invited_by, created_at, updated_at, expires_at)
       VALUES ($1, $2, 'member', $3, $4, $5, $5, $5)`,
      [admin.workspaceId, `late${i}@example.com`, randomBytes(16).toString('hex'), admin.userId, past]
    )
  }
  const expired = await Promise.all(trio.map(async h => await expireInvitations(
    { db: h.db, clock: h.clock, events: h.app.services.ports.events }
  )))
  t.equal(expired.reduce((x, y) => x + y, 0), n, `the three sweeps expired ${expired.join(' + ')} = ${n}`)
  const events = await a.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM audit_events WHERE workspace_id = $1 AND action = 'invitation.expired'", [admin.workspaceId]
  )
  t.equal(events.rows[0]?.n, n, 'one invitation.expired event each')

  const ended: SignedIn[] = []
  for (let i = 0; i < 7; i++) ended.push(await a.signIn({ workspaceId: admin.workspaceId }))
  for (const s of ended) await revokeSession(a.db, s.sessionId, new Date(a.clock.now().getTime() - 30 * 86_400_000))
  const swept = await Promise.all(trio.map(async h => await h.app.retention.sweep()))
  t.equal(swept.reduce((x, y) => x + y.sessions, 0), ended.length, 'each ended session removed by one sweep')
})

t.test('Slack retries of one event hitting two instances act once', { skip }, async t => {
  const owner = await a.signIn({ role: 'admin' })
  t.equal((await install(a, owner)).statusCode, 302)
  const before = slack?.posts().length ?? 0
  const ev = envelope(mention('U0SOMEONE', 'hi'))
  const retry = { headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' } }
  const answers = await Promise.all([sendEvent(a, ev), sendEvent(b, ev, retry), sendEvent(c, ev, retry)])
  t.same(answers.map(r => r.statusCode), [200, 200, 200], 'each acknowledged')
  await Promise.all(trio.map(async h => { await h.app.services.slack.whenIdle() }))
  t.equal((slack?.posts().length ?? 0) - before, 1, 'one reply')
})

t.test('a session revoked on one instance is refused by all at once', { skip }, async t => {
  const user = await a.signIn()
  const me = async (h: TestApp) => await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: user.cookie } })
  for (const h of trio) t.equal((await me(h)).statusCode, 200, 'signed in on every instance')
  const out = await b.inject({ method: 'POST', url: '/api/auth/logout', headers: json(user.cookie), payload: {} })
  t.equal(out.statusCode, 204, out.body)
  const revokedAt = performance.now()
  for (const h of trio) {
    const res = await me(h)
    t.equal(res.statusCode, 401, 'refused')
    assertContract(t, 'GET', '/api/users/me', res)
  }
  t.ok(performance.now() - revokedAt < 1000, 'within a second: no instance caches sessions, the row decides')
})

t.test('the setup link works once across instances', { skip }, async t => {
  const fresh = await three({ SESSION_SECRET: 'three-instances-'.repeat(3), AUTH_RATE_LIMIT_PER_MINUTE: '1000' })
  const link = await (fresh[0] as TestApp).app.services.setup.issueLink()
  const token = new URL(link ?? 'http://x/').searchParams.get('token') ?? ''
  const answers = await Promise.all(fresh.map(async (h, i) => await h.inject({
    method: 'POST',
    url: '/api/setup',
    headers: { 'content-type': 'application/json' },
    payload: { token, workspaceName: `Acme ${i}`, email: `first${i}@example.com` }
  })))
  for (const res of answers) assertContract(t, 'POST', '/api/setup', res)
  t.same(answers.map(r => r.statusCode).sort(), [201, 410, 410], 'one instance sets up; the others answer 410')
  const workspaces = await (fresh[0] as TestApp).db.query<{ n: number }>('SELECT count(*)::int AS n FROM workspaces')
  t.equal(workspaces.rows[0]?.n, 1, 'one workspace')
})
