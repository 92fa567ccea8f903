import t from 'tap'
import { build, testDatabase, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invited } from '../helpers/invite.js'
import { jobsSettled } from '../helpers/jobs.js'
import { startFakeHttp, type FakeHttp } from '../helpers/fake-http.js'
import { startSmtp } from '../helpers/smtp.js'
import { createFirstAdmin } from '../../src/invitations/first-admin.js'
import { queueDueReminders } from '../../src/invitations/reminders.js'
import { until } from '../helpers/service-process.js'

// Issue 29: an invitation's life as an admin sees it. Viewed (the signup page's preview, never a
// GET), reminded (once, through the job engine, across instances and restarts), seen (the list,
// the funnel) and only true states (the first admin's own invitation). Every new event reaches a
// webhook receiver on loopback. One app (and one database) for most steps.

t.setTimeout(240_000)

const FAST = { JOBS_POLL_MS: '500', AUTH_RATE_LIMIT_PER_MINUTE: '1000' }

const json = (cookie: string): Record<string, string> => ({ cookie, 'content-type': 'application/json' })

const smtp = await startSmtp(t)
const receiver: FakeHttp = await startFakeHttp(t)
receiver.on('POST /hook', () => ({ status: 204 }))
const delivered = (type: string, invitationId: string): boolean => receiver.requests.some(r => {
  const e = r.json as { type?: string, data?: { invitationId?: string } } | null
  return e?.type === type && e.data?.invitationId === invitationId
})

const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
const admin = await h.signIn({ role: 'admin', email: 'boss@example.com' })
{
  const hook = await h.inject({
    method: 'POST', url: '/api/webhook-endpoints', headers: json(admin.cookie), payload: { url: `${receiver.url}/hook` }
  })
  if (hook.statusCode !== 201) throw new Error(`webhook endpoint: ${hook.statusCode} ${hook.body}`)
}

/** Invites through the REST door; the token is read from the e-mail the relay caught. */
async function invitedByEmail (who: SignedIn, email: string, app: TestApp = h): Promise<{ id: string, token: string }> {
  const seen = smtp.messages.length
  const { id } = await invited(app, who, { email })
  const mail = await smtp.nextMessage(seen)
  return { id, token: /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? '' }
}

async function listed (app: TestApp, cookie: string, id: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url: '/api/invitations?status=pending&limit=100', headers: { cookie } })
  assertContract(t, 'GET', '/api/invitations', res)
  const found = (res.json().items as Array<Record<string, unknown>>).find(i => i.id === id)
  if (found === undefined) throw new Error(`invitation ${id} not listed`)
  return found
}

const eventsOf = async (action: string, id: string, app: TestApp = h): Promise<number> => (await app.db.query<{
  n: number
}>(
  'SELECT count(*)::int AS n FROM audit_events WHERE action = $1 AND target_id = $2', [action, id]
)).rows[0]?.n ?? 0

t.test('viewed: a GET of the signup page records nothing; the first preview records once', async t => {
  const inv = await invitedByEmail(admin, 'viewer@example.com')
  const page = await h.inject({ method: 'GET', url: `/signup?token=${inv.token}` })
  t.equal(page.statusCode, 200, 'the page a link scanner fetches')
  const head = await h.inject({ method: 'HEAD', url: `/signup?token=${inv.token}` })
  t.ok(head.statusCode < 500, 'HEAD too')
  t.equal((await listed(h, admin.cookie, inv.id)).viewedAt, null, 'GET alone: not viewed')
  t.equal(await eventsOf('invitation.viewed', inv.id), 0, 'no event')

  const cross = await h.inject({
    method: 'POST',
    url: '/api/auth/invitation',
    headers: { 'content-type': 'application/json', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    payload: { token: inv.token }
  })
  t.equal(cross.statusCode, 403, 'a cross-site preview is refused before it records anything')
  t.equal(await eventsOf('invitation.viewed', inv.id), 0)

  const before = h.clock.now().toISOString()
  // Two first opens at once (two tabs): one is the first.
  const previews = await Promise.all([1, 2].map(async () => await h.inject({
    method: 'POST', url: '/api/auth/invitation', headers: { 'content-type': 'application/json' }, payload: { token: inv.token }
  })))
  for (const p of previews) {
    t.equal(p.statusCode, 200)
    assertContract(t, 'POST', '/api/auth/invitation', p)
  }
  h.clock.advance(60_000)
  const later = await h.inject({
    method: 'POST', url: '/api/auth/invitation', headers: { 'content-type': 'application/json' }, payload: { token: inv.token }
  })
  t.equal(later.statusCode, 200)
  t.equal(await eventsOf('invitation.viewed', inv.id), 1, 'one invitation.viewed for three previews')
  t.equal((await listed(h, admin.cookie, inv.id)).viewedAt, before, 'viewedAt: the first preview, not the later one')
  await until('invitation.viewed delivered', () => delivered('invitation.viewed', inv.id) || undefined)
  const hook = receiver.requests.find(r => (r.json as { type?: string }).type === 'invitation.viewed')
  t.match(hook?.json, {
    type: 'invitation.viewed',
    source: 'web',
    actor: { type: 'system', id: null },
    data: { invitationId: inv.id, email: 'viewer@example.com', role: 'member' }
  }, 'the webhook body: thin, no token')
  t.notOk(hook?.body.includes(inv.token), 'no token in the event')

  const unknown = await h.inject({
    method: 'POST', url: '/api/auth/invitation', headers: { 'content-type': 'application/json' }, payload: { token: 'x'.repeat(43) }
  })
  t.equal(unknown.statusCode, 400, 'a forged token records nothing (and is refused)')
})

t.test('true states: the first admin\'s own invitation never says pending', async t => {
  const setupApp = await build(t, { env: FAST })
  const link = await setupApp.app.services.setup.issueLink()
  const token = new URL(link ?? 'http://x/').searchParams.get('token') ?? ''
  const done = await setupApp.inject({
    method: 'POST',
    url: '/api/setup',
    headers: { 'content-type': 'application/json' },
    payload: { token, workspaceName: 'First', email: 'first@example.com' }
  })
  t.equal(done.statusCode, 201)
  const cookie = String(done.headers['set-cookie']).split(';')[0] ?? ''
  const list = await setupApp.inject({ method: 'GET', url: '/api/invitations?status=accepted', headers: { cookie } })
  assertContract(t, 'GET', '/api/invitations', list)
  t.match(list.json().items, [{ email: 'first@example.com', status: 'accepted', deliveryStatus: 'not_sent', lastSentAt: null }],
    'the setup page\'s admin: accepted, never e-mailed (not "pending")')

  const ports = h.app.services.ports
  const printed = await createFirstAdmin(
    { db: h.db, clock: h.clock, config: h.config, log: ports.log, mailer: null, events: ports.events },
    { email: 'printed@example.com', workspaceName: 'Printed' }
  )
  t.equal(printed.delivery, 'skipped')
  const row = await h.db.query<{ delivery_status: string }>('SELECT delivery_status FROM invitations WHERE id = $1', [printed.invitationId])
  t.equal(row.rows[0]?.delivery_status, 'not_sent', 'create-admin without a mailer: the link was printed, not e-mailed')
  const again = await createFirstAdmin(
    { db: h.db, clock: h.clock, config: h.config, log: ports.log, mailer: null, events: ports.events },
    { email: 'printed@example.com', workspaceName: 'Printed' }
  )
  t.ok(again.reissued)
  const row2 = await h.db.query<{ delivery_status: string }>('SELECT delivery_status FROM invitations WHERE id = $1', [printed.invitationId])
  t.equal(row2.rows[0]?.delivery_status, 'not_sent', 're-issued without a mailer: still not sent')
})

t.test('the reminder setting: 2 days by default, 1 to 7 or off, audited', async t => {
  const other = await h.signIn({ role: 'admin' })
  const get = await h.inject({ method: 'GET', url: '/api/workspace/settings', headers: { cookie: other.cookie } })
  assertContract(t, 'GET', '/api/workspace/settings', get)
  t.equal(get.json().invitationReminderDays, 2, 'every workspace starts at 2 days before expiry')
  const patch = async (v: unknown) => await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: json(other.cookie), payload: { invitationReminderDays: v }
  })
  for (const bad of [0, 8, 2.5, '3']) t.equal((await patch(bad)).statusCode, 400, `${JSON.stringify(bad)} is refused`)
  const three = await patch(3)
  assertContract(t, 'PATCH', '/api/workspace/settings', three)
  t.equal(three.json().invitationReminderDays, 3)
  const off = await patch(null)
  t.equal(off.json().invitationReminderDays, null, 'null: no reminders')
  const audit = await h.db.query<{ payload: unknown }>(
    "SELECT payload FROM audit_events WHERE workspace_id = $1 AND action = 'workspace.settings_changed' ORDER BY id", [other.workspaceId]
  )
  t.same(audit.rows.map(r => r.payload), [
    { invitationReminderDays: { from: 2, to: 3 } }, { invitationReminderDays: { from: 3, to: null } }
  ])
})

t.test('a reminder: once across two instances and a restart, the same link, never to accepted or revoked', async t => {
  const db = await testDatabase(t)
  // Two instances of one service: one database, one SESSION_SECRET, one (fake) clock.
  const env = { ...FAST, SMTP_URL: smtp.url, SESSION_SECRET: 'two-instances-reminding-'.repeat(2) }
  const a = await build(t, { db, env })
  const b = await build(t, { db, clock: a.clock, env })
  const boss = await a.signIn({ role: 'admin', email: 'reminding@example.com' })
  const hook = await a.inject({
    method: 'POST', url: '/api/webhook-endpoints', headers: json(boss.cookie), payload: { url: `${receiver.url}/hook` }
  })
  t.equal(hook.statusCode, 201)
  const waiting = await invitedByEmail(boss, 'waiting@example.com', a)
  const joins = await invitedByEmail(boss, 'joins@example.com', a)
  const revoked = await invitedByEmail(boss, 'revoked@example.com', b)
  t.equal((await a.inject({
    method: 'POST', url: '/api/auth/signup', headers: { 'content-type': 'application/json' }, payload: { token: joins.token }
  })).statusCode, 201, 'one accepts')
  t.equal((await b.inject({ method: 'DELETE', url: `/api/invitations/${revoked.id}`, headers: { cookie: boss.cookie } })).statusCode, 200)
  // A second workspace reminds one day before expiry: not due yet when the first one's are.
  const late = await a.signIn({ role: 'admin', email: 'late@example.com' })
  await a.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: json(late.cookie), payload: { invitationReminderDays: 1 } })
  const later = await invitedByEmail(late, 'later@example.com', b)

  const sweep = async (app: TestApp): Promise<number> => await queueDueReminders(app.app.services.ports)
  t.same(await Promise.all([sweep(a), sweep(b)]), [0, 0], 'nothing is due 7 days before expiry')
  a.clock.advance(5 * 86_400_000 + 60_000) // 2 days less a minute before the 7-day expiry
  const seen = smtp.messages.length
  const claimed = await Promise.all([sweep(a), sweep(b), sweep(a), sweep(b)])
  t.equal(claimed.reduce((x, y) => x + y, 0), 1, `four sweeps on two instances at once claim one reminder: ${claimed.join(' + ')}`)
  const mail = await smtp.nextMessage(seen)
  t.match(mail.subject, /^Reminder: /)
  t.same(mail.to, ['waiting@example.com'])
  t.ok(mail.text.includes(`token=${waiting.token}`), 'the same link the invitation e-mail carried: no rotation')
  t.equal(await eventsOf('invitation.reminder_sent', waiting.id, a), 1)
  const row = await listed(b, boss.cookie, waiting.id)
  t.equal(row.remindedAt, a.clock.now().toISOString(), 'remindedAt, seen from the other instance')
  t.equal((await a.inject({
    method: 'POST', url: '/api/auth/invitation', headers: { 'content-type': 'application/json' }, payload: { token: waiting.token }
  })).statusCode, 200, 'and the link still works')
  await until('invitation.reminder_sent delivered', () => delivered('invitation.reminder_sent', waiting.id) || undefined)
  t.same(await Promise.all([sweep(a), sweep(b)]), [0, 0], 'a later sweep claims nothing again')
  for (const id of [joins.id, revoked.id, later.id]) t.equal(await eventsOf('invitation.reminder_sent', id, a), 0)

  // The relay refuses; the instance that queued the e-mail stops; another starts: the job survives.
  smtp.mode = 'reject-rcpt'
  a.clock.advance(86_400_000) // one day less a minute before the second workspace's expiry
  t.equal(await sweep(b), 1, 'the second workspace\'s reminder, one day before')
  // At least one refused attempt, recorded: the job waits for its retry, no send in flight (one
  // abandoned by the stop below could still deliver once the relay accepts: at-least-once).
  await until('the refused reminder waiting for its retry', async () => (await b.db.query(
    `SELECT 1 FROM "${b.config.jobs.schema}".job WHERE name = 'invitation-reminder' AND state = 'retry'`
  )).rows.length > 0 || undefined)
  await b.app.close()
  await a.app.close()
  smtp.mode = 'accept'
  const seenBefore = smtp.messages.length
  const c = await build(t, { db, clock: a.clock, env })
  const retried = await smtp.nextMessage(seenBefore, 60_000)
  t.same(retried.to, ['later@example.com'], 'sent after the restart, by the new instance')
  t.ok(retried.text.includes(`token=${later.token}`))
  t.equal(await queueDueReminders(c.app.services.ports), 0, 'and not claimed again')
  await jobsSettled(c, ['invitation-reminder'])
  t.equal(smtp.messages.filter(m => m.to.includes('later@example.com')).length, 2, 'the invitation and one reminder')
  t.equal(smtp.messages.filter(m => m.to.includes('waiting@example.com')).length, 2, 'the invitation and one reminder')
  t.equal(smtp.messages.filter(m => /joins|revoked/.test(m.to.join())).length, 2, 'no reminder to the accepted or the revoked')
})

t.test('seen: the list says what happened to each invitation; the funnel counts a period in one statement', async t => {
  const boss = await h.signIn({ role: 'admin' })
  const started = h.clock.now()
  const [a, b, c] = [await invitedByEmail(boss, 'fa@example.com'), await invitedByEmail(boss, 'fb@example.com'), await invitedByEmail(boss, 'fc@example.com')]
  const post = async (url: string, payload: Record<string, unknown>) => await h.inject({
    method: 'POST', url, headers: { 'content-type': 'application/json' }, payload
  })
  await post('/api/auth/invitation', { token: a.token })
  t.equal((await post('/api/auth/signup', { token: a.token })).statusCode, 201)
  await post('/api/auth/invitation', { token: b.token })
  t.match(await listed(h, boss.cookie, b.id), { deliveryStatus: 'sent', viewedAt: String, remindedAt: null, status: 'pending' })
  t.match(await listed(h, boss.cookie, c.id), { deliveryStatus: 'sent', lastSentAt: String, viewedAt: null })
  h.clock.advance(8 * 86_400_000) // c expires unseen (read as expired at once; the sweep writes it later)
  const admin2 = await h.signIn({ role: 'admin', workspaceId: boss.workspaceId })
  const since = new Date(started.getTime() - 60_000).toISOString()
  const funnel = async (query: string, cookie = admin2.cookie) => await h.inject({
    method: 'GET', url: `/api/invitations/funnel${query}`, headers: { cookie }
  })
  const period = await funnel(`?since=${encodeURIComponent(since)}`)
  assertContract(t, 'GET', '/api/invitations/funnel', period)
  t.match(period.json(), { since, sent: 3, viewed: 2, accepted: 1, expiredUnseen: 1, bounced: 0 })
  const before = await funnel(`?until=${encodeURIComponent(since)}`)
  t.match(before.json(), { sent: 0, viewed: 0, accepted: 0 }, 'a period before them counts none')
  const recent = await funnel('')
  t.equal(recent.statusCode, 200, 'the last 30 days by default')
  const backwards = await funnel(`?since=${encodeURIComponent(h.clock.now().toISOString())}&until=${encodeURIComponent(since)}`)
  t.equal(backwards.statusCode, 400)
  assertContract(t, 'GET', '/api/invitations/funnel', backwards)
  const member = await h.signIn({ role: 'member', workspaceId: boss.workspaceId })
  t.equal((await funnel('', member.cookie)).statusCode, 403, 'admins only')
})
