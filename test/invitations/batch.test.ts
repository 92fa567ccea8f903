import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { until } from '../helpers/service-process.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { startJobEngine } from '../../src/jobs/engine.js'

// POST /api/invitations/batch and GET /api/invitation-batches/{batchId}: a result per row of
// each kind, the e-mails sent by the job engine (one per invited row), the budget, 201 against
// 202 and the pages of a large batch, roles, Idempotency-Key, and the MCP tool invite_many.
// One app and one SMTP peer for the file; each case in a workspace of its own.

const BUDGET = 30

interface Row {
  index: number
  message: string | null
  email: string
  role: string
  result: string
  delivery: string | null
  retryAfter: number | null
  duplicateOf: number | null
  invitationId: string | null
}
interface Batch {
  id: string
  status: string
  total: number
  results: Record<string, number>
  delivery: Record<string, number>
  items: Row[]
  nextCursor: string | null
}

async function setUp (t: { teardown(fn: () => unknown): void }) {
  const smtp = await startSmtp(t)
  // The relay runs in this process and parses each message before its 250: on a loaded machine
  // that answer can take longer than the default 5 s deadline, and a send abandoned after the
  // relay kept the message is the one ambiguity SMTP has (delivered, but not known to be): the
  // retry would be a second e-mail. Deadlines are test/ops/faults-smtp.test.ts's subject, not this one's.
  const h = await build(t, { env: { SMTP_URL: smtp.url, INVITE_EMAILS_PER_HOUR: String(BUDGET), SMTP_TIMEOUT_MS: '60000' } })
  return { smtp, h }
}

async function postBatch (h: TestApp, who: SignedIn, body: unknown, headers: Record<string, string> = {}) {
  return await h.inject({
    method: 'POST',
    url: '/api/invitations/batch',
    headers: { cookie: who.cookie, 'content-type': 'application/json', ...headers },
    payload: JSON.stringify(body)
  })
}

async function getBatch (h: TestApp, who: SignedIn, id: string, query = '') {
  return await h.inject({ method: 'GET', url: `/api/invitation-batches/${id}${query}`, headers: { cookie: who.cookie } })
}

/** The batch once no e-mail of it is left to send (the job engine works on its own). */
async function completed (h: TestApp, who: SignedIn, id: string): Promise<Batch> {
  return await until(`batch ${id} to complete`, async () => {
    const b = (await getBatch(h, who, id, '?limit=100')).json<Batch>()
    return b.status === 'completed' ? b : undefined
  }, 60_000)
}

const sentTo = (smtp: { messages: Array<{ to: string[] }> }, email: string): number =>
  smtp.messages.filter(m => m.to.includes(email)).length

t.test('invitation batches', async t => {
  const { smtp, h } = await setUp(t)

  await t.test('a result per row, each kind; one e-mail per invited row', async t => {
    const admin = await h.signIn()
    const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
    const pending = await h.inject({
      method: 'POST',
      url: '/api/users/invite',
      headers: { cookie: admin.cookie, 'content-type': 'application/json' },
      payload: { email: 'pending@example.com', role: 'member' }
    })
    t.equal(pending.statusCode, 200, 'one invitation pending before the batch')
    const res = await postBatch(h, admin, {
      role: 'member',
      rows: [
        { email: 'New.Person@Example.com' },
        { email: ' pending@example.com ', role: 'admin' },
        { email: member.email },
        { email: 'not an address' },
        { email: 'new.person@example.com' }
      ]
    })
    t.equal(res.statusCode, 201, 'a small batch is answered 201 with every row')
    assertContract(t, 'POST', '/api/invitations/batch', res)
    const b = res.json<Batch>()
    t.same(b.items.map(r => [r.index, r.email, r.role, r.result, r.delivery, r.duplicateOf]), [
      [0, 'new.person@example.com', 'member', 'invited', 'queued', null],
      [1, 'pending@example.com', 'admin', 'resent', 'queued', null],
      [2, member.email, 'member', 'already_member', null, null],
      [3, 'not an address', 'member', 'invalid', null, null],
      [4, 'new.person@example.com', 'member', 'duplicate', null, 0]
    ], 'the duplicate names the row it repeats in duplicateOf')
    t.same(b.results, { invited: 1, resent: 1, alreadyMember: 1, invalid: 1, duplicate: 1, overBudget: 0 })
    t.equal(b.nextCursor, null)
    const done = await completed(h, admin, b.id)
    t.same(done.delivery, { queued: 0, sent: 2, failed: 0, cancelled: 0 }, 'both e-mails sent')
    t.equal(sentTo(smtp, 'new.person@example.com'), 1, 'the new address got one e-mail')
    t.equal(sentTo(smtp, 'pending@example.com'), 2, 'the pending one its first and the batch\'s')
    const again = smtp.messages.filter(m => m.to.includes('pending@example.com')).at(-1) as { subject: string, text: string }
    t.match(again.text, /signup\?token=/, 'with a working link')
    const list = await h.inject({ method: 'GET', url: '/api/invitations?limit=10', headers: { cookie: admin.cookie } })
    const invs = list.json<{ items: Array<{ email: string, role: string, deliveryStatus: string }> }>().items
    t.same(
      invs.map(i => [i.email, i.role, i.deliveryStatus]).sort(),
      [['new.person@example.com', 'member', 'sent'], ['pending@example.com', 'admin', 'sent']],
      'each invitation keeps its delivery state'
    )
    const audit = await h.inject({ method: 'GET', url: '/api/audit-events?limit=20', headers: { cookie: admin.cookie } })
    const actions = audit.json<{ items: Array<{ action: string }> }>().items.map(e => e.action)
    t.equal(actions.filter(a => a === 'invitation.created').length, 2, 'invitation.created: the single invite\'s, the new row\'s')
    t.equal(actions.filter(a => a === 'invitation.resent').length, 1, 'invitation.resent for the pending one')
  })

  await t.test('the budget: rows past it are over_budget, 202, pages of rows', async t => {
    const admin = await h.signIn()
    const rows = Array.from({ length: BUDGET + 10 }, (_, i) => ({ email: `b${i}@example.com` }))
    const res = await postBatch(h, admin, { rows })
    t.equal(res.statusCode, 202, 'more than 25 rows: 202')
    assertContract(t, 'POST', '/api/invitations/batch', res)
    const b = res.json<Batch>()
    t.equal(res.headers.location, `/api/invitation-batches/${b.id}`)
    t.same(b.results, { invited: BUDGET, resent: 0, alreadyMember: 0, invalid: 0, duplicate: 0, overBudget: 10 })
    t.equal(b.items.length, 40, 'the first page of 50')
    const over = b.items.filter(r => r.result === 'over_budget')
    t.same(over.map(r => r.index), Array.from({ length: 10 }, (_, i) => BUDGET + i), 'the last rows, in request order')
    t.ok(over.every(r => r.retryAfter !== null && r.retryAfter > 0 && r.retryAfter <= 3600), 'each says when to retry')
    t.ok(over.every(r => r.invitationId === null && r.delivery === null), 'and is not invited at all')

    const seen: number[] = []
    let cursor: string | null = null
    do {
      const page = await getBatch(h, admin, b.id, `?limit=15${cursor !== null ? `&cursor=${cursor}` : ''}`)
      t.equal(page.statusCode, 200)
      assertContract(t, 'GET', '/api/invitation-batches/{batchId}', page)
      const p = page.json<Batch>()
      seen.push(...p.items.map(r => r.index))
      cursor = p.nextCursor
    } while (cursor !== null)
    t.same(seen, Array.from({ length: 40 }, (_, i) => i), 'three pages, every row once, in order')

    await completed(h, admin, b.id)
    t.equal(rows.filter(r => sentTo(smtp, r.email) === 1).length, BUDGET, 'one e-mail to each invited row')
    t.equal(rows.filter(r => sentTo(smtp, r.email) > 1).length, 0, 'nobody twice')
    const spent = await postBatch(h, admin, { rows: [{ email: 'late@example.com' }] })
    t.equal(spent.json<Batch>().items[0]?.result, 'over_budget', 'the budget stays spent for the hour')

    const other = await h.signIn()
    t.equal((await getBatch(h, other, b.id)).statusCode, 404, 'another workspace does not see the batch')
    const foreign = await postBatch(h, other, { rows: [{ email: 'x@example.com' }] })
    const wrong = await getBatch(h, admin, b.id, '?limit=1')
    const alien = await getBatch(h, other, foreign.json<Batch>().id, `?cursor=${wrong.json<Batch>().nextCursor ?? ''}`)
    t.equal(alien.statusCode, 400, 'a cursor of another batch is refused')
    assertContract(t, 'GET', '/api/invitation-batches/{batchId}', alien)
  })

  await t.test('roles: per row or for the batch; only admins', async t => {
    const admin = await h.signIn()
    const res = await postBatch(h, admin, {
      role: 'admin',
      rows: [{ email: 'r1@example.com' }, { email: 'r2@example.com', role: 'member' }]
    })
    t.same(res.json<Batch>().items.map(r => r.role), ['admin', 'member'])
    const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
    const refused = await postBatch(h, member, { rows: [{ email: 'r3@example.com' }] })
    t.equal(refused.statusCode, 403, 'a member may not')
    assertContract(t, 'POST', '/api/invitations/batch', refused)
    const tooMany = await postBatch(h, admin, { rows: Array.from({ length: 1001 }, (_, i) => ({ email: `m${i}@example.com` })) })
    t.equal(tooMany.statusCode, 400, 'more than 1,000 rows')
    const badRole = await postBatch(h, admin, { rows: [{ email: 'r4@example.com', role: 'owner' }] })
    t.equal(badRole.statusCode, 400, 'an unknown role')
    await completed(h, admin, res.json<Batch>().id)
  })

  await t.test('Idempotency-Key: the same batch is answered again, not sent again', async t => {
    const admin = await h.signIn()
    const body = { rows: [{ email: 'i1@example.com' }, { email: 'I2@example.com' }] }
    const first = await postBatch(h, admin, body, { 'idempotency-key': 'batch-1' })
    t.equal(first.statusCode, 201)
    const replay = await postBatch(h, admin, { rows: [{ email: 'i1@example.com' }, { email: 'i2@example.com' }] }, { 'idempotency-key': 'batch-1' })
    t.equal(replay.statusCode, 201, 'the same normalized rows: the first answer')
    t.same(replay.json<Batch>().id, first.json<Batch>().id, 'the same batch')
    const reused = await postBatch(h, admin, { rows: [{ email: 'i3@example.com' }] }, { 'idempotency-key': 'batch-1' })
    t.equal(reused.statusCode, 422, 'another body with the key')
    await completed(h, admin, first.json<Batch>().id)
    t.equal(sentTo(smtp, 'i1@example.com'), 1, 'one e-mail')
    t.equal(sentTo(smtp, 'i2@example.com'), 1, 'one e-mail')
  })

  await t.test('the MCP tool invite_many', async t => {
    const admin = await h.signIn()
    const key = await createApiKey(h, admin)
    const list = await mcpRequest(h, key.secret)
    t.ok(list.body.includes('"invite_many"'), 'listed')
    const res = await mcpRequest(h, key.secret, 'tools/call', {
      name: 'invite_many', arguments: { rows: [{ email: 'mcp1@example.com' }, { email: 'nope' }] }
    })
    const out = res.json<{ result: { structuredContent: Batch, isError?: boolean } }>().result
    t.notOk(out.isError)
    t.same(out.structuredContent.items.map(r => r.result), ['invited', 'invalid'])
    await completed(h, admin, out.structuredContent.id)
    t.equal(sentTo(smtp, 'mcp1@example.com'), 1)
    const audit = await h.inject({ method: 'GET', url: '/api/audit-events?limit=5', headers: { cookie: admin.cookie } })
    t.match(audit.json<{ items: Array<{ action: string, source: string }> }>().items.find(e => e.action === 'invitation.created'),
      { source: 'mcp' }, 'audited as through MCP')
  })
})

t.test('a chunk whose job spends its retries: its rows fail, the budget comes back, the batch completes', async t => {
  // The relay refuses every connection, so each attempt of the chunk fails (the row is retried),
  // and the chunk queue allows no retry: the first failure spends them all. Before the dead
  // letter queue, that job ended failed in pg-boss and the rows stayed queued, the batch
  // processing, for good, with nothing said.
  const h = await build(t, { env: { SMTP_URL: `smtp://127.0.0.1:${await closedPort()}`, INVITE_EMAILS_PER_HOUR: '2' } })
  await h.db.query(`UPDATE "${h.config.jobs.schema}".queue SET retry_limit = 0 WHERE name = 'invitation-batch'`)
  const admin = await h.signIn()
  const res = await postBatch(h, admin, { rows: [{ email: 'first@example.com' }, { email: 'second@example.com' }] })
  t.equal(res.statusCode, 201)
  const b = res.json<Batch>()
  t.same(b.results, { invited: 2, resent: 0, alreadyMember: 0, invalid: 0, duplicate: 0, overBudget: 0 }, 'the budget of 2 taken')
  const done = await completed(h, admin, b.id)
  t.same(done.delivery, { queued: 0, sent: 0, failed: 2, cancelled: 0 }, 'both rows failed, none left queued')
  for (const row of done.items) {
    t.match(row, { delivery: 'failed', message: /\S/ }, `${row.email}: failed, with the last attempt's error`)
  }
  assertContract(t, 'GET', '/api/invitation-batches/{batchId}', await getBatch(h, admin, b.id))
  const again = await postBatch(h, admin, { rows: [{ email: 'third@example.com' }, { email: 'fourth@example.com' }] })
  t.equal(again.json<Batch>().results.invited, 2, 'the failed rows gave their budget back: two more are invited, not over_budget')
})

t.test('a job database made before the dead letter, or with other settings, takes the current ones at start', async t => {
  const h = await build(t)
  const schema = `"${h.config.jobs.schema}"`
  await h.db.query(`UPDATE ${schema}.queue SET dead_letter = NULL, expire_seconds = 999 WHERE name = 'invitation-batch'`)
  const { schema: js } = h.config.jobs
  const engine = await startJobEngine({
    db: h.db, log: h.app.log, schema: js, pollSeconds: 2, expireSeconds: 42, maintenanceSeconds: 60, workers: false
  })
  await engine.stop()
  const q = await h.db.query<{ dead_letter: string | null, expire_seconds: number }>(
    `SELECT dead_letter, expire_seconds FROM ${schema}.queue WHERE name = 'invitation-batch'`)
  t.same(q.rows, [{ dead_letter: 'invitation-batch-abandoned', expire_seconds: 42 }], 'the dead letter and this start\'s expiry')
})
