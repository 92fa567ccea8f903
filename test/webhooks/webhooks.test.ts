import t from 'tap'
import type { LookupFunction } from 'node:net'
import { Webhook } from 'standardwebhooks'
import { build, TEST_DATABASE_URL, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { idempotencyKey, invited } from '../helpers/invite.js'
import { startFakeHttp, type FakeHttp, type FakeRequest } from '../helpers/fake-http.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { buildWithSlack, envelope, install, mention, sendEvent, TEAM_ID } from '../helpers/slack.js'
import { expireInvitations } from '../../src/invitations/expiry.js'
import { jobsSettled } from '../helpers/jobs.js'
import { until } from '../helpers/service-process.js'

// Webhooks end to end: real actions through every door, a real receiver on loopback, and each
// delivery verified by the Standard Webhooks reference implementation (`standardwebhooks`).

t.setTimeout(300_000)

// Fast schedules so that retries happen within a test; the behaviour is the production code's.
const FAST = {
  JOBS_POLL_MS: '500',
  JOBS_MAINTENANCE_SECONDS: '1',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_DELAYS_MS: '200,200,200'
}

const hooks = (fake: FakeHttp): FakeRequest[] => fake.requests.filter(r => r.path === '/hook')
const typeOf = (r: FakeRequest): string => (r.json as { type: string }).type

async function subscribe (
  h: TestApp, admin: SignedIn, url: string, extra: Record<string, unknown> = {}
): Promise<{ id: string, secret: string }> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { url, ...extra }
  })
  if (res.statusCode !== 201) throw new Error(`POST /api/webhook-endpoints: ${res.statusCode} ${res.body}`)
  return res.json()
}

function verified (secret: string, r: FakeRequest): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature'])
  })
}

const json = (cookie: string) => ({ cookie, 'content-type': 'application/json' })

t.test('every event type from its real action, through REST, MCP and chat; signed and thin', async t => {
  const { h, slack } = await buildWithSlack(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 204 }))
  const admin = await h.signIn({ role: 'admin', email: 'boss@example.com' })
  const created = await h.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: json(admin.cookie),
    payload: { url: `${receiver.url}/hook`, description: 'everything' }
  })
  t.equal(created.statusCode, 201)
  assertContract(t, 'POST', '/api/webhook-endpoints', created)
  const { secret } = created.json()
  t.match(secret, /^whsec_[A-Za-z0-9+/=]{32}$/, 'a Standard Webhooks secret, shown once')
  const listed = await h.inject({ method: 'GET', url: '/api/webhook-endpoints', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/webhook-endpoints', listed)
  t.notOk(listed.body.includes(secret), 'never listed again')

  const links: string[] = []
  // REST: invite (with an Idempotency-Key), re-send, revoke.
  const ada = await invited(h, admin, { email: 'ada@example.com' }, idempotencyKey('key-ada'))
  links.push(ada.res.json().invitationUrl)
  const again = await h.inject({
    method: 'POST', url: `/api/invitations/${ada.id}/resend`, headers: { cookie: admin.cookie }
  })
  t.equal(again.statusCode, 200, 're-sent')
  links.push(again.json().invitationUrl)
  const bob = await invited(h, admin, { email: 'bob@example.com' })
  links.push(bob.res.json().invitationUrl)
  await h.inject({ method: 'DELETE', url: `/api/invitations/${bob.id}`, headers: { cookie: admin.cookie } })
  // Ada accepts (invitation.accepted + member.joined), is promoted, then removed.
  const resent = links[1] as string
  const signup = await h.inject({
    method: 'POST', url: '/api/auth/signup', payload: { token: new URL(resent).searchParams.get('token') }
  })
  t.equal(signup.statusCode, 201)
  const adaId = signup.json().user.id as string
  await h.inject({ method: 'PATCH', url: `/api/users/${adaId}`, headers: json(admin.cookie), payload: { role: 'admin' } })
  await h.inject({ method: 'DELETE', url: `/api/users/${adaId}`, headers: { cookie: admin.cookie } })
  // MCP: an API key (api_key.created), an invite through the MCP tool, the key revoked.
  const key = await createApiKey(h, admin)
  const viaMcp = await mcpRequest(h, key.secret, 'tools/call', {
    name: 'invite_user', arguments: { email: 'mcp@example.com', role: 'member' }
  })
  t.equal(viaMcp.statusCode, 200)
  await h.inject({ method: 'DELETE', url: `/api/api-keys/${key.id}`, headers: { cookie: admin.cookie } })
  // Chat: install, an invite from Slack, uninstall.
  t.equal((await install(h, admin)).statusCode, 302)
  slack.emails.set('U0BOSS', 'boss@example.com')
  t.equal((await sendEvent(h, envelope(mention('U0BOSS', 'invite chat@example.com')))).statusCode, 200)
  await until('the chat invite', () => receiver.requests.some(r => r.body.includes('chat@example.com')) || undefined)
  t.equal((await sendEvent(h, envelope({ type: 'app_uninstalled' }))).statusCode, 200)
  // Expiry: the scheduled job's sweep, once the invitation is past its expiry.
  links.push((await invited(h, admin, { email: 'cy@example.com' })).res.json().invitationUrl)
  h.clock.advance(8 * 86_400_000)
  const expired = await expireInvitations({ db: h.db, clock: h.clock, events: h.app.services.ports.events })
  t.equal(expired, 3, 'cy, and the MCP and chat invitations')

  const expected = [
    'invitation.created', 'invitation.resent', 'invitation.revoked', 'invitation.accepted', 'member.joined',
    'member.role_changed', 'member.removed', 'invitation.expired', 'api_key.created', 'api_key.revoked',
    'chat.installed', 'chat.uninstalled'
  ]
  await until('every event type', () => expected.every(e => hooks(receiver).some(r => typeOf(r) === e)) || undefined)
  const got = hooks(receiver)
  for (const r of got) t.ok(verified(secret, r), `${typeOf(r)}: the signature verifies with standardwebhooks`)
  const events = got.map(r => r.json as {
    id: string,
    type: string,
    source: string,
    actor: { type: string, id: string | null },
    requestId: string | null,
    idempotencyKey: string | null,
    data: Record<string, unknown>
  })
  for (const r of got) t.equal(r.headers['webhook-id'], (r.json as { id: string }).id, 'webhook-id is the event id')
  const first = (type: string, pred: (e: typeof events[number]) => boolean = () => true) =>
    events.find(e => e.type === type && pred(e))
  t.match(first('invitation.created', e => e.data.email === 'ada@example.com'), {
    source: 'web',
    actor: { type: 'user', id: admin.userId },
    idempotencyKey: 'key-ada',
    requestId: /^[0-9a-f-]{36}$/,
    data: { invitationId: ada.id, email: 'ada@example.com', role: 'member' }
  }, 'REST with the session cookie (the browser\'s door): who, which door, which request and which Idempotency-Key')
  t.match(first('invitation.created', e => e.data.email === 'mcp@example.com'), {
    source: 'mcp', actor: { type: 'api_key', id: key.id }
  }, 'MCP door')
  t.match(first('invitation.created', e => e.data.email === 'chat@example.com'), {
    source: 'chat', actor: { type: 'chat_user', id: admin.userId }
  }, 'chat door')
  t.match(first('member.joined'), { source: 'web', data: { userId: adaId, email: 'ada@example.com', role: 'member' } })
  t.match(first('member.role_changed'), { data: { userId: adaId, from: 'member', to: 'admin' } })
  t.match(first('invitation.expired'), { source: 'system', actor: { type: 'system', id: null } })
  t.match(first('chat.installed'), { data: { platform: 'slack', teamId: TEAM_ID } })
  const bodies = got.map(r => r.body).join('\n')
  for (const link of links) {
    t.notOk(bodies.includes(new URL(link).searchParams.get('token') ?? '-'), 'no invitation token in any event')
  }
  t.notOk(bodies.includes(key.secret) || bodies.includes(slack.botToken), 'no API key or bot token either')
  t.notOk(/https?:\/\/[^"]*signup/.test(bodies), 'no link')

  // The same events as a pull feed, oldest first, with a cursor that keeps its place (read by
  // another admin: the first one's session ran out with the clock moved past the expiry).
  const reader = await h.signIn({ workspaceId: admin.workspaceId })
  const feed = await h.inject({ method: 'GET', url: '/api/events?limit=3', headers: { cookie: reader.cookie } })
  assertContract(t, 'GET', '/api/events?limit=3', feed)
  t.same(feed.json().items.map((e: { type: string }) => e.type), ['invitation.created', 'invitation.resent', 'invitation.created'])
  const all: string[] = []
  let after = ''
  for (;;) {
    const page = await h.inject({ method: 'GET', url: `/api/events?limit=5${after}`, headers: { cookie: reader.cookie } })
    const items = page.json().items as Array<{ id: string }>
    if (items.length === 0) break
    all.push(...items.map(e => e.id))
    after = `&after=${String(page.json().nextCursor)}`
  }
  t.same(all, [...all].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))), 'oldest first')
  await until('every feed event delivered', () =>
    all.every(id => hooks(receiver).some(r => r.headers['webhook-id'] === id)) || undefined)
  t.same(new Set(all), new Set(hooks(receiver).map(r => r.headers['webhook-id'])),
    'the feed lists exactly the events delivered')
  const filtered = await h.inject({
    method: 'GET', url: '/api/events?types=member.joined&types=member.removed', headers: { cookie: reader.cookie }
  })
  t.equal(filtered.statusCode, 200, filtered.body)
  t.same(filtered.json().items.map((e: { type: string }) => e.type), ['member.joined', 'member.removed'])
})

t.test('invitation.delivery_failed: the e-mail could not be sent', async t => {
  // Nothing listens on port 1: the SMTP connection is refused at once.
  const h = await build(t, { env: { ...FAST, SMTP_URL: 'smtp://127.0.0.1:1', SMTP_TIMEOUT_MS: '1000' } })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 200 }))
  const admin = await h.signIn()
  const ep = await subscribe(h, admin, `${receiver.url}/hook`, { eventTypes: ['invitation.delivery_failed'] })
  const res = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: json(admin.cookie), payload: { email: 'lost@example.com', role: 'member' }
  })
  t.equal(res.json().code, 'EMAIL_SEND_FAILED')
  const got = await until('the event', () => hooks(receiver)[0])
  t.ok(verified(ep.secret, got))
  t.match(got.json, {
    type: 'invitation.delivery_failed', source: 'web', data: { email: 'lost@example.com', deliveryStatus: 'failed' }
  })
  t.equal(hooks(receiver).length, 1, 'only the subscribed type')
})

t.test('a failed attempt is retried with the same webhook-id; Retry-After is honoured', async t => {
  const h = await build(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  let calls = 0
  const at: number[] = []
  receiver.on('POST /hook', () => {
    calls++
    at.push(Date.now())
    return calls === 1 ? { status: 500 } : calls === 2 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200 }
  })
  const admin = await h.signIn()
  const ep = await subscribe(h, admin, `${receiver.url}/hook`, { eventTypes: ['api_key.created'] })
  await createApiKey(h, admin)
  await until('three attempts', () => hooks(receiver).length >= 3 || undefined)
  const [a, b, c] = hooks(receiver) as [FakeRequest, FakeRequest, FakeRequest]
  t.equal(a.headers['webhook-id'], b.headers['webhook-id'], 'the retry carries the same webhook-id')
  t.equal(b.headers['webhook-id'], c.headers['webhook-id'])
  for (const r of [a, b, c]) t.ok(verified(ep.secret, r), 'each attempt is signed')
  const list = await until('the delivery to succeed', async () => {
    const res = await h.inject({
      method: 'GET', url: `/api/webhook-endpoints/${ep.id}/deliveries`, headers: { cookie: admin.cookie }
    })
    return res.json().items[0]?.status === 'succeeded' ? res : undefined
  })
  assertContract(t, 'GET', `/api/webhook-endpoints/${ep.id}/deliveries`, list)
  t.match(list.json().items[0], { attempts: 3, lastStatusCode: 200, eventType: 'api_key.created' })
  // After the 503 the wait was the receiver's Retry-After (2 s), not the 200 ms schedule.
  const gap = (at[2] ?? 0) - (at[1] ?? 0)
  t.ok(gap >= 1500, `the third attempt came after Retry-After (${gap} ms after the second)`)

  // A manual retry sends it again, same id.
  const deliveryId = list.json().items[0].id as string
  const retry = await h.inject({
    method: 'POST', url: `/api/webhook-deliveries/${deliveryId}/retry`, headers: { cookie: admin.cookie }
  })
  t.equal(retry.statusCode, 202)
  assertContract(t, 'POST', `/api/webhook-deliveries/${deliveryId}/retry`, retry)
  await until('the manual retry', () => hooks(receiver).length >= 4 || undefined)
  t.equal(hooks(receiver)[3]?.headers['webhook-id'], a.headers['webhook-id'])
})

t.test('the schedule runs out: the delivery fails; 410 Gone disables the endpoint and tells the admins', async t => {
  const h = await build(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /down', () => ({ status: 500 }))
  receiver.on('POST /gone', () => ({ status: 410 }))
  const admin = await h.signIn()
  const down = await subscribe(h, admin, `${receiver.url}/down`)
  const gone = await subscribe(h, admin, `${receiver.url}/gone`)
  await createApiKey(h, admin)
  const deliveries = async (id: string) => (await h.inject({
    method: 'GET', url: `/api/webhook-endpoints/${id}/deliveries?status=failed`, headers: { cookie: admin.cookie }
  })).json().items as Array<{ attempts: number, lastStatusCode: number }>
  const failed = await until('the schedule to run out', async () => (await deliveries(down.id))[0])
  t.match(failed, { attempts: 4, lastStatusCode: 500 }, 'now + 3 retries, then failed')
  t.equal(receiver.requests.filter(r => r.path === '/down').length, 4)
  t.match((await until('410', async () => (await deliveries(gone.id))[0])), { attempts: 1, lastStatusCode: 410 })
  const eps = (await h.inject({ method: 'GET', url: '/api/webhook-endpoints', headers: { cookie: admin.cookie } }))
    .json().items as Array<{ id: string, enabled: boolean, disabledReason: string | null }>
  t.match(eps.find(e => e.id === gone.id), { enabled: false, disabledReason: 'gone' })
  t.match(eps.find(e => e.id === down.id), { enabled: true })
  const trail = await h.inject({
    method: 'GET', url: '/api/audit-events?action=webhook_endpoint.disabled', headers: { cookie: admin.cookie }
  })
  t.match(trail.json().items, [{ actor: { type: 'system' }, target: { id: gone.id }, payload: { reason: 'gone' } }])
  // Nothing more reaches a disabled endpoint; a retry asks to enable it first.
  await createApiKey(h, admin, 'second')
  const retry = await h.inject({
    method: 'POST',
    url: `/api/webhook-deliveries/${String((await deliveries(gone.id))[0] && (await h.db.query<{ id: string }>(
      'SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 LIMIT 1', [gone.id])).rows[0]?.id)}/retry`,
    headers: { cookie: admin.cookie }
  })
  t.equal(retry.statusCode, 409)
  t.equal(retry.json().code, 'WEBHOOK_ENDPOINT_DISABLED')
  await until('the second event at /down', () => receiver.requests.filter(r => r.path === '/down').length >= 5 || undefined)
  t.equal(receiver.requests.filter(r => r.path === '/gone').length, 1, 'the disabled endpoint got nothing more')
})

t.test('an endpoint failing for longer than WEBHOOK_DISABLE_AFTER_MS is disabled', async t => {
  const h = await build(t, { env: { ...FAST, WEBHOOK_RETRY_DELAYS_MS: '200,200,200,200,200,200', WEBHOOK_DISABLE_AFTER_MS: '1000' } })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => {
    h.clock.advance(600) // the service's clock moves on between attempts
    return { status: 502 }
  })
  const admin = await h.signIn()
  const ep = await subscribe(h, admin, `${receiver.url}/hook`)
  await createApiKey(h, admin)
  const row = await until('the endpoint to be disabled', async () => {
    const r = await h.db.query<{ enabled: boolean, disabledReason: string }>(
      'SELECT enabled, disabled_reason AS "disabledReason" FROM webhook_endpoints WHERE id = $1', [ep.id])
    return r.rows[0]?.enabled === false ? r.rows[0] : undefined
  })
  t.equal(row.disabledReason, 'failing')
  t.ok(hooks(receiver).length < 7, 'before the schedule ran out')
})

t.test('secret rotation: both secrets sign during the overlap, only the new one after', async t => {
  const h = await build(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 200 }))
  const admin = await h.signIn()
  const ep = await subscribe(h, admin, `${receiver.url}/hook`, { eventTypes: ['api_key.created'] })
  const rotated = await h.inject({
    method: 'POST', url: `/api/webhook-endpoints/${ep.id}/rotate-secret`, headers: { cookie: admin.cookie }
  })
  assertContract(t, 'POST', `/api/webhook-endpoints/${ep.id}/rotate-secret`, rotated)
  const { secret } = rotated.json()
  t.not(secret, ep.secret)
  await createApiKey(h, admin, 'one')
  const during = await until('a delivery', () => hooks(receiver)[0])
  t.ok(verified(ep.secret, during), 'the old secret verifies')
  t.ok(verified(secret, during), 'the new secret verifies')
  t.equal(String(during.headers['webhook-signature']).split(' ').length, 2)
  h.clock.advance(24 * 3_600_000 + 1000)
  await createApiKey(h, admin, 'two')
  const after = await until('the second delivery', () => hooks(receiver)[1])
  t.equal(String(after.headers['webhook-signature']).split(' ').length, 1, 'one signature once the overlap is over')
  t.notOk(String(after.headers['webhook-signature']).includes(
    String(during.headers['webhook-signature']).split(' ')[1] ?? '-'), 'the old secret no longer signs')
  // The secret is stored encrypted: neither value is in the table.
  const stored = (await h.db.query<{ row: string }>('SELECT row_to_json(e)::text AS row FROM webhook_endpoints e'))
    .rows.map(r => r.row).join()
  for (const s of [ep.secret, secret]) t.notOk(stored.includes(s.slice(6)), 'no signing secret in clear')
})

t.test('a test event: to one endpoint alone, signed, in its deliveries, in no feed', async t => {
  const h = await build(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 204 }))
  receiver.on('POST /other', () => ({ status: 204 }))
  const admin = await h.signIn()
  const ep = await subscribe(h, admin, `${receiver.url}/hook`, { eventTypes: ['member.removed'] })
  await subscribe(h, admin, `${receiver.url}/other`)
  const url = `/api/webhook-endpoints/${ep.id}/test`
  const sent = await h.inject({ method: 'POST', url, headers: { cookie: admin.cookie } })
  t.equal(sent.statusCode, 202)
  assertContract(t, 'POST', url, sent)
  t.match(sent.json(), { endpointId: ep.id, eventType: 'webhook.test', status: 'pending', attempts: 0 })
  const got = await until('the test event', () => hooks(receiver)[0])
  t.ok(verified(ep.secret, got), 'signed with the endpoint\'s secret (standardwebhooks verifies it)')
  t.match(got.json, {
    id: sent.json().eventId, type: 'webhook.test', source: 'web', actor: { type: 'user', id: admin.userId }, data: {}
  }, 'whatever the endpoint subscribes to')
  const listed = await until('the delivery succeeded', async () => {
    const res = await h.inject({ method: 'GET', url: `/api/webhook-endpoints/${ep.id}/deliveries`, headers: { cookie: admin.cookie } })
    const item = (res.json().items as Array<{ id: string, status: string }>).find(d => d.id === sent.json().id)
    return item?.status === 'succeeded' ? item : undefined
  })
  t.match(listed, { eventType: 'webhook.test', attempts: 1, lastStatusCode: 204 }, 'listed in the endpoint\'s deliveries')
  t.equal(receiver.requests.filter(r => r.path === '/other').length, 0, 'no other endpoint receives it')
  const feed = await h.inject({ method: 'GET', url: '/api/events', headers: { cookie: admin.cookie } })
  t.same(feed.json().items, [], 'the feed does not list it')
  const trail = await h.inject({ method: 'GET', url: '/api/audit-events?action=webhook_endpoint.tested', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/audit-events?action=webhook_endpoint.tested', trail)
  t.match(trail.json().items, [{ action: 'webhook_endpoint.tested', source: 'web', target: { type: 'webhook_endpoint', id: ep.id } }])

  const off = await h.inject({ method: 'PATCH', url: `/api/webhook-endpoints/${ep.id}`, headers: json(admin.cookie), payload: { enabled: false } })
  t.equal(off.statusCode, 200)
  const disabled = await h.inject({ method: 'POST', url, headers: { cookie: admin.cookie } })
  t.equal(disabled.statusCode, 409)
  assertContract(t, 'POST', url, disabled)
  t.equal(disabled.json().code, 'WEBHOOK_ENDPOINT_DISABLED')
  const missing = `/api/webhook-endpoints/${'0'.repeat(8)}-0000-4000-8000-${'0'.repeat(12)}/test`
  const none = await h.inject({ method: 'POST', url: missing, headers: { cookie: admin.cookie } })
  t.equal(none.statusCode, 404)
  assertContract(t, 'POST', missing, none)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const refused = await h.inject({ method: 'POST', url, headers: { cookie: member.cookie } })
  t.equal(refused.statusCode, 403)
  assertContract(t, 'POST', url, refused)
})

t.test('two instances on one database deliver each event once', async t => {
  // One service, two processes' worth of it: same database, same secret.
  const env = { ...FAST, SESSION_SECRET: 'two-instances-'.repeat(3) }
  const first = await build(t, { env })
  const second = await build(t, { env, db: first.db })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 200, delayMs: 20 }))
  const admin = await first.signIn()
  await subscribe(first, admin, `${receiver.url}/hook`, { eventTypes: ['invitation.created'] })
  const n = 20
  const instance = (i: number): TestApp => i % 2 === 0 ? first : second
  const statuses = await Promise.all(Array.from({ length: n }, async (_, i) => (await instance(i).inject({
    method: 'POST', url: '/api/users/invite', headers: json(admin.cookie), payload: { email: `p${i}@example.com`, role: 'member' }
  })).statusCode))
  t.same([...new Set(statuses)], [200], 'every invitation made, through both instances')
  await until(`${n} deliveries`, () => hooks(receiver).length >= n || undefined)
  // A fixed wait, kept: it proves that no duplicate arrives within it. A job both instances took
  // (the fault looked for) leaves no trace to await; the one that completes it hides the other.
  await new Promise(resolve => setTimeout(resolve, 1500))
  const ids = hooks(receiver).map(r => String(r.headers['webhook-id']))
  t.equal(ids.length, n, 'one request per event')
  t.equal(new Set(ids).size, n, 'no webhook-id twice')
})

t.test('a batch of invitations: one event per invitation, as a single invite writes it', async t => {
  // The batch records its events together (one statement for the audit rows, one for the
  // deliveries, one for their jobs); each must read as the single invite's does.
  const h = await build(t, { env: FAST })
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 204 }))
  const admin = await h.signIn()
  const { secret } = await subscribe(h, admin, `${receiver.url}/hook`, {
    eventTypes: ['invitation.created', 'invitation.resent']
  })
  const single = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: json(admin.cookie), payload: { email: 'one@example.com', role: 'member' }
  })
  t.equal(single.statusCode, 200, 'one invitation pending before the batch')
  const rows = [{ email: 'one@example.com', role: 'admin' }, ...Array.from({ length: 30 }, (_, i) => ({ email: `b${i}@example.com` }))]
  const batch = await h.inject({
    method: 'POST',
    url: '/api/invitations/batch',
    headers: { ...json(admin.cookie), 'idempotency-key': 'batch-hooks' },
    payload: { rows }
  })
  t.equal(batch.statusCode, 202)
  await until('32 deliveries', () => hooks(receiver).length >= 32 || undefined)
  await jobsSettled(h, ['webhook-delivery']) // a duplicate delivery, if any, has been sent by now
  const got = hooks(receiver)
  t.equal(got.length, 32, 'the single invite\'s event, then one per row of the batch')
  for (const r of got) t.ok(verified(secret, r), 'signed')
  t.equal(new Set(got.map(r => String(r.headers['webhook-id']))).size, 32, 'no webhook-id twice')
  interface Sent {
    type: string, source: string, actor: object, idempotencyKey: string | null, data: Record<string, unknown>
  }
  const events = got.map(r => r.json as Sent)
  const ids = await h.db.query<{ id: string, email: string }>(
    'SELECT id, email FROM invitations WHERE workspace_id = $1', [admin.workspaceId])
  const idOf = new Map(ids.rows.map(r => [r.email, r.id]))
  const ofBatch = events.filter(e => e.idempotencyKey === 'batch-hooks')
  t.equal(ofBatch.length, 31, 'one event per invitation of the batch')
  t.same(ofBatch.filter(e => e.type === 'invitation.resent').map(e => e.data),
    [{ invitationId: idOf.get('one@example.com'), email: 'one@example.com', role: 'admin' }], 'the pending one: resent')
  for (const e of ofBatch.filter(e => e.type === 'invitation.created')) {
    t.match(e, {
      source: 'web',
      actor: { type: 'user', id: admin.userId },
      data: { invitationId: idOf.get(String(e.data.email)), role: 'member' }
    }, `${String(e.data.email)}: who, which door, which invitation`)
  }
  const audit = await h.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM audit_events
      WHERE workspace_id = $1 AND idempotency_key = 'batch-hooks' AND event_type IS NOT NULL`, [admin.workspaceId])
  t.equal(audit.rows[0]?.n, 31, 'one audit row per invitation')
})

t.test('SSRF: outside local, only https to public addresses, checked again at connect time', async t => {
  const production = TEST_DATABASE_URL !== null
  // Names resolve as this resolver says: metadata.test → the cloud metadata address, and
  // rebind.test → a public address on the first lookup, loopback after (DNS rebinding).
  let rebinds = 0
  const lookup = ((hostname: string, _o: unknown, cb: (e: Error | null, a: unknown) => void) => {
    const at = (address: string) => { cb(null, [{ address, family: 4 }]) }
    if (hostname === 'metadata.test') at('169.254.169.254')
    else if (hostname === 'rebind.test') at(rebinds++ === 0 ? '93.184.216.34' : '127.0.0.1')
    else if (hostname === 'public.test') at('93.184.216.34')
    else cb(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }), [])
  }) as unknown as LookupFunction
  const h = await build(t, {
    lookup,
    env: {
      ...FAST,
      APP_ENV: production ? 'production' : 'staging',
      SESSION_SECRET: 's'.repeat(40),
      SMTP_URL: 'smtp://127.0.0.1:9', // required outside local; nothing is sent here
      PUBLIC_URL: 'https://workspace.example.com',
      ...(TEST_DATABASE_URL !== null ? { DATABASE_URL: TEST_DATABASE_URL } : {})
    }
  })
  const admin = await h.signIn()
  for (const [url, why] of [
    ['http://127.0.0.1/hook', /https/],
    ['https://127.0.0.1/hook', /127\.0\.0\.1 is not a public address/],
    ['https://10.0.0.1/hook', /10\.0\.0\.1 is not a public address/],
    ['https://[::1]/hook', /::1 is not a public address/],
    ['https://100.64.0.1/hook', /not a public address/],
    ['https://metadata.test/latest/meta-data', /169\.254\.169\.254 is not a public address/],
    ['https://nowhere.test/hook', /not found/]
  ] as const) {
    const res = await h.inject({
      method: 'POST', url: '/api/webhook-endpoints', headers: json(admin.cookie), payload: { url }
    })
    t.equal(res.statusCode, 400, `${url} refused`)
    t.equal(res.json().code, 'WEBHOOK_URL_NOT_ALLOWED')
    t.match(res.json().message, why)
    assertContract(t, 'POST', '/api/webhook-endpoints', res)
  }
  t.equal((await h.inject({
    method: 'POST', url: '/api/webhook-endpoints', headers: json(admin.cookie), payload: { url: 'https://public.test/hook' }
  })).statusCode, 201, 'a public https URL is accepted')
  await h.inject({
    method: 'DELETE',
    url: '/api/webhook-endpoints/' + (await h.inject({
      method: 'GET', url: '/api/webhook-endpoints', headers: { cookie: admin.cookie }
    })).json().items[0].id,
    headers: { cookie: admin.cookie }
  })
  // Accepted while the name pointed outside; at connect time it points at loopback: refused.
  const ep = await subscribe(h, admin, 'https://rebind.test:1/hook')
  await createApiKey(h, admin)
  const row = await until('the attempt', async () => (await h.db.query<{ lastError: string | null }>(
    'SELECT last_error AS "lastError" FROM webhook_deliveries WHERE endpoint_id = $1 AND attempts > 0', [ep.id]
  )).rows[0])
  t.match(row.lastError, /address not allowed: 127\.0\.0\.1 is not a public address/)
})
