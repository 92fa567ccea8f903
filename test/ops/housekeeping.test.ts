import t from 'tap'
import { randomUUID } from 'node:crypto'
import { TEST_DATABASE_URL, build } from '../helpers/build.js'
import { finishChatEvent, insertChatEvent } from '../../src/db/chat-events.js'
import { claimIdempotencyKey } from '../../src/db/idempotency-keys.js'
import { completeBatchIfDone, insertBatch, insertBatchItems } from '../../src/db/invitation-batches.js'
import { insertOAuthState } from '../../src/db/oauth-states.js'
import { insertSsoFlow } from '../../src/db/sso-flows.js'
import { rememberSsoAssertion } from '../../src/db/sso-assertions.js'
import { revokeSession } from '../../src/db/sessions.js'
import { RETENTION_BATCH } from '../../src/housekeeping/retention.js'
import { staleTables } from '../../src/housekeeping/statistics.js'
import { planOf } from '../helpers/plans.js'

// The retention sweep deletes what no longer does anything, once older than the configured ages,
// and nothing else: live sessions, fresh tokens and states, Idempotency-Keys inside their replay
// window and chat events not yet processed stay. Time is moved with the FakeClock.

const DAY = 86_400_000

t.test('the retention sweep removes dead rows past their age, in batches, and nothing alive', async t => {
  // defaults: RETENTION_ENDED_DAYS=7, RETENTION_IDEMPOTENCY_HOURS=24, RETENTION_CHAT_EVENTS_DAYS=7
  const h = await build(t)
  const count = async (sql: string): Promise<number> => (await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${sql}`
  )).rows[0]?.n ?? -1

  // t0: rows that will be dead and old by t1.
  const t0 = h.clock.now()
  const old = await h.signIn() // session expires t0 + 7 days
  const revoked = await h.signIn({ workspaceId: old.workspaceId })
  await revokeSession(h.db, revoked.sessionId, t0)
  // More expired login tokens than one batch, so the sweep has to loop.
  await h.db.query(
    `INSERT INTO login_tokens (user_id, token_hash, expires_at, created_at)
     SELECT $1, md5(g::text), $2, $3 FROM generate_series(1, $4::int) g`,
    [old.userId, new Date(t0.getTime() + 15 * 60_000), t0, RETENTION_BATCH * 2 + 1])
  await insertOAuthState(
    h.db,
    {
      stateHash: 'old-state',
      kind: 'slack',
      workspaceId: old.workspaceId,
      userId: old.userId,
      expiresAt: new Date(t0.getTime() + 600_000),
      now: t0
    }
  )
  await claimIdempotencyKey(
    h.db,
    {
      workspaceId: old.workspaceId,
      principal: `user:${old.userId}`,
      operation: 'postUsersInvite',
      key: 'old-key',
      requestHash: 'x',
      owner: randomUUID(),
      lockedUntil: t0,
      now: t0
    }
  )
  await insertChatEvent(h.db, { eventId: 'Ev-old', teamId: 'T1', type: 'app_mention', payload: {}, now: t0 })
  await finishChatEvent(h.db, 'Ev-old', { status: 'processed', now: t0 })
  await insertChatEvent(h.db, { eventId: 'Ev-stuck', teamId: 'T1', type: 'app_mention', payload: {}, now: t0 })
  // An SSO sign-in's flow (10 minutes) and a SAML assertion kept until its NotOnOrAfter.
  const connection = await h.db.query<{ id: string }>(
    `INSERT INTO sso_connections (workspace_id, name, protocol, saml_idp_metadata_xml, saml_idp_certificates,
        created_at, updated_at) VALUES ($1, 'IdP', 'saml', '<x/>', ARRAY['pem'], $2, $2) RETURNING id`,
    [old.workspaceId, t0])
  const ssoFlow = (stateHash: string, now: Date) => insertSsoFlow(h.db, {
    stateHash,
    connectionId: connection.rows[0]?.id as string,
    purpose: 'sign_in',
    adminId: null,
    oidcNonce: null,
    oidcVerifierEnc: null,
    samlRequestId: '_request',
    expiresAt: new Date(now.getTime() + 600_000),
    now
  })
  const assertion = (assertionId: string, now: Date) => rememberSsoAssertion(h.db, {
    idpEntityId: 'https://idp.example', assertionId, keepUntil: new Date(now.getTime() + 3_600_000), now
  })
  await ssoFlow('old-flow', t0)
  await assertion('_old', t0)

  // t1 = t0 + 15 days: the session ended 8 days ago, the rest longer; fresh rows beside them.
  h.clock.advance(15 * DAY)
  const t1 = h.clock.now()
  const live = await h.signIn({ workspaceId: old.workspaceId })
  await h.db.query(
    'INSERT INTO login_tokens (user_id, token_hash, expires_at, created_at) VALUES ($1, $2, $3, $4)',
    [live.userId, 'fresh-token', new Date(t1.getTime() + 15 * 60_000), t1]
  )
  await insertOAuthState(
    h.db,
    {
      stateHash: 'fresh-state',
      kind: 'slack',
      workspaceId: live.workspaceId,
      userId: live.userId,
      expiresAt: new Date(t1.getTime() + 600_000),
      now: t1
    }
  )
  await claimIdempotencyKey(
    h.db,
    {
      workspaceId: live.workspaceId,
      principal: `user:${live.userId}`,
      operation: 'postUsersInvite',
      key: 'fresh-key',
      requestHash: 'x',
      owner: randomUUID(),
      lockedUntil: t1,
      now: t1
    }
  )
  await insertChatEvent(h.db, { eventId: 'Ev-fresh', teamId: 'T1', type: 'app_mention', payload: {}, now: t1 })
  await ssoFlow('fresh-flow', t1)
  await assertion('_fresh', t1)
  await finishChatEvent(h.db, 'Ev-fresh', { status: 'processed', now: t1 })

  const removed = await h.app.retention.sweep()
  t.same(
    removed,
    {
      loginTokens: RETENTION_BATCH * 2 + 1,
      oauthStates: 1,
      ssoFlows: 1,
      ssoAssertions: 1,
      sessions: 2,
      idempotencyKeys: 1,
      chatEvents: 1,
      invitationBatches: 0
    },
    'the dead rows, every one of them'
  )

  t.same(
    (await h.db.query('SELECT token_hash FROM login_tokens')).rows, [{ token_hash: 'fresh-token' }],
    'the fresh login token stays'
  )
  t.same(
    (await h.db.query('SELECT state_hash FROM oauth_states')).rows, [{ state_hash: 'fresh-state' }],
    'the fresh OAuth state stays'
  )
  t.same(
    (await h.db.query('SELECT state_hash FROM sso_flows')).rows, [{ state_hash: 'fresh-flow' }], 'the fresh SSO flow stays'
  )
  t.same(
    (await h.db.query('SELECT assertion_id FROM sso_assertions')).rows, [{ assertion_id: '_fresh' }],
    'the assertion that could still be replayed stays'
  )
  t.same(
    (await h.db.query('SELECT key FROM idempotency_keys')).rows, [{ key: 'fresh-key' }],
    'the Idempotency-Key inside its window stays'
  )
  t.same(
    (await h.db.query('SELECT event_id FROM chat_events ORDER BY event_id')).rows,
    [{ event_id: 'Ev-fresh' }, { event_id: 'Ev-stuck' }], 'unprocessed and recent chat events stay'
  )
  t.equal(await count(`sessions WHERE id = '${live.sessionId}'`), 1, 'the live session stays')
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: live.cookie } })
  t.equal(me.statusCode, 200, 'and still signs its user in')

  t.same(
    await h.app.retention.sweep(),
    {
      loginTokens: 0,
      oauthStates: 0,
      ssoFlows: 0,
      ssoAssertions: 0,
      sessions: 0,
      idempotencyKeys: 0,
      chatEvents: 0,
      invitationBatches: 0
    },
    'a second sweep finds nothing'
  )
})

t.test('a session that ended recently is kept until RETENTION_ENDED_DAYS have passed', async t => {
  const h = await build(t, { env: { RETENTION_ENDED_DAYS: '2' } })
  const s = await h.signIn()
  await revokeSession(h.db, s.sessionId, h.clock.now())
  h.clock.advance(DAY)
  t.equal((await h.app.retention.sweep()).sessions, 0, 'revoked 1 day ago: kept')
  h.clock.advance(DAY + 1000)
  t.equal((await h.app.retention.sweep()).sessions, 1, 'revoked 2 days ago: removed')
})

t.test('a completed invitation batch and its rows go RETENTION_BATCHES_DAYS after it completed; one still sending stays', async t => {
  // Each row holds an address as an admin pasted it (invalid and duplicate ones too): kept for ever
  // before, a batch's rows now go with it, 30 days (the default) after its last e-mail was settled.
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const actor = { kind: 'session' as const, userId: admin.userId, email: admin.email, name: null, apiKeyId: null, requestId: null }
  const batch = async (rows: number, done: boolean): Promise<string> => {
    const b = await insertBatch(h.db, { workspaceId: admin.workspaceId, actor, total: rows, now: h.clock.now() })
    await insertBatchItems(h.db, b.id, Array.from({ length: rows }, (_, i) => ({
      position: i,
      email: `pasted-${i}@example.com`,
      role: 'member' as const,
      result: 'invalid' as const,
      invitationId: null,
      delivery: done ? null : 'queued' as const,
      attempts: 0,
      retryAfterSeconds: null,
      duplicateOf: null,
      message: null
    })))
    if (done) t.ok(await completeBatchIfDone(h.db, b.id, h.clock.now()), 'completed')
    return b.id
  }
  // Asked by an admin of the workspace signed in now (the first one's session expired on the way).
  const get = async (id: string): Promise<number> => {
    const now = await h.signIn({ workspaceId: admin.workspaceId, role: 'admin' })
    return (await h.inject({
      method: 'GET', url: `/api/invitation-batches/${id}`, headers: { cookie: now.cookie }
    })).statusCode
  }
  const old = await batch(1000, true)
  const sending = await batch(3, false)
  h.clock.advance(20 * DAY)
  const recent = await batch(2, true)
  h.clock.advance(11 * DAY) // old: 31 days since it completed; recent: 11
  t.equal(await get(old), 200, 'the old batch is there until the sweep')
  const removed = await h.app.retention.sweep()
  t.equal(removed.invitationBatches, 1, 'one batch deleted')
  t.equal(await get(old), 404, 'the old batch is 404')
  const rows = (await h.db.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM invitation_batch_rows WHERE batch_id = $1', [old])).rows[0]?.n
  t.equal(rows, 0, 'its 1,000 rows went with it')
  t.equal(await get(recent), 200, 'a batch completed 11 days ago stays')
  t.equal(await get(sending), 200, 'a batch still sending stays, however old')
})

t.test('the login-link limit query has its index (user_id, created_at)', async t => {
  const h = await build(t)
  const r = await h.db.query<{ indexdef: string }>(
    "SELECT indexdef FROM pg_indexes WHERE tablename = 'login_tokens' AND schemaname = current_schema()"
  )
  t.ok(r.rows.some(x => /\(user_id, created_at\)/.test(x.indexdef)), r.rows.map(x => x.indexdef).join('; '))
})

t.test('on the embedded database the sweep refreshes the planner statistics of the tables that grew, only those', {
  skip: TEST_DATABASE_URL !== null && 'PGlite only: PostgreSQL analyzes by itself (autovacuum)'
}, async t => {
  const h = await build(t)
  const admin = await h.signIn()
  await h.app.retention.sweep()
  t.same(await staleTables(h.db), [], 'after a sweep, no table has grown since its statistics')
  // A workspace's audit trail grows: 2,000 invitation.created rows.
  await h.db.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source)
     SELECT gen_random_uuid(), $1, 'invitation.created', 'user', $2, $3, 'invitation', gen_random_uuid()::text,
            '{}'::jsonb, now(), 'invitation.created', 'api'
       FROM generate_series(1, 2000)`, [admin.workspaceId, admin.userId, admin.email])
  t.same(await staleTables(h.db), ['audit_events'], 'the table that grew, alone')
  const estimate = async (): Promise<number> => (await planOf(h.db, {
    text: 'SELECT * FROM audit_events WHERE workspace_id = $1 AND target_type = \'invitation\'',
    params: [admin.workspaceId]
  }))[0]?.['Plan Rows'] ?? -1
  const before = await estimate()
  t.ok(before < 200, `before the sweep the planner expects ${before} of the workspace's 2,000 audit rows`)
  await h.app.retention.sweep()
  const after = await estimate()
  t.ok(after > 1500, `after it, ${after}`)
  t.same(await staleTables(h.db), [], 'and nothing left to analyze')
})

t.test('on the embedded database the sweep vacuums: rows it deleted leave room that new rows reuse', {
  skip: TEST_DATABASE_URL !== null && 'PGlite only: PostgreSQL vacuums by itself (autovacuum)'
}, async t => {
  // PGlite runs no autovacuum. Without a VACUUM the space of deleted rows is never recorded as free,
  // so each new row goes at the table's end and its indexes keep every dead entry: a table whose
  // rows come and go (login tokens, sessions, jobs) grew by its whole churn, for ever.
  const h = await build(t)
  const admin = await h.signIn()
  const size = async (): Promise<number> => Number((await h.db.query<{ bytes: string }>(
    "SELECT pg_total_relation_size('login_tokens')::text AS bytes"
  )).rows[0]?.bytes)
  const sizes: number[] = []
  for (let cycle = 0; cycle < 6; cycle++) {
    // 3,000 login tokens that expired long ago, then a sweep that deletes them.
    const t0 = h.clock.now()
    await h.db.query(
      `INSERT INTO login_tokens (user_id, token_hash, expires_at, created_at)
       SELECT $1, md5($2 || g::text), $3, $3 FROM generate_series(1, 3000) g`,
      [admin.userId, `cycle-${cycle}-`, new Date(t0.getTime() - DAY)])
    const removed = await h.app.retention.sweep()
    t.equal(removed.loginTokens, 3000, `cycle ${cycle + 1}: the sweep deleted the 3,000 tokens`)
    sizes.push(await size())
  }
  // The first cycles size the table and its indexes; after that it stays (it grew by each cycle's
  // 550 kB, 872 to 3,920 kB in six, before the sweep vacuumed).
  const [second, last] = [sizes[1] as number, sizes.at(-1) as number]
  t.ok(last <= second * 1.1, `login_tokens after each of 6 cycles of 3,000 rows: ${sizes.map(b => Math.round(b / 1024)).join(', ')} kB`)
})

t.test('on the embedded database a table that grows a little at each sweep is still analyzed once it grew by a fifth', {
  skip: TEST_DATABASE_URL !== null && 'PGlite only: PostgreSQL analyzes by itself (autovacuum)'
}, async t => {
  // VACUUM sets pg_class.relpages, the size staleTables read as "when last analyzed": with a VACUUM
  // at every sweep, a table growing by less than a fifth between two sweeps never counted as grown.
  const h = await build(t)
  const admin = await h.signIn()
  const audit = async (action: string, n: number): Promise<void> => {
    await h.db.query(
      `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                                 payload, created_at, event_type, source)
       SELECT gen_random_uuid(), $1, $4, 'user', $2, $3, 'invitation', gen_random_uuid()::text,
              '{}'::jsonb, now(), $4, 'api'
         FROM generate_series(1, $5::int)`, [admin.workspaceId, admin.userId, admin.email, action, n])
  }
  const commonActions = async (): Promise<string> => (await h.db.query<{ v: string | null }>(
    "SELECT most_common_vals::text AS v FROM pg_stats WHERE tablename = 'audit_events' AND attname = 'action'"
  )).rows[0]?.v ?? ''
  await audit('invitation.created', 5000)
  await h.app.retention.sweep()
  t.notMatch(await commonActions(), 'invitation.revoked', 'analyzed with 5,000 created')
  // Three steps of 600 revoked (12 % each: none alone is a fifth; together, 36 %).
  for (let step = 1; step <= 3; step++) {
    await audit('invitation.revoked', 600)
    await h.app.retention.sweep()
    if (step === 2) t.notMatch(await commonActions(), 'invitation.revoked', 'not yet after two steps (24 % of rows, under a fifth of pages plus 8)')
  }
  t.match(await commonActions(), 'invitation.revoked', 'the statistics see the revoked rows after the third')
})
