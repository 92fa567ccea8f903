import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startFakeHttp, type FakeHttp } from '../helpers/fake-http.js'
import { startSmtp } from '../helpers/smtp.js'
import { createFirstAdmin } from '../../src/invitations/first-admin.js'

// Issue 29: an invitation's life as an admin sees it. Viewed (the signup page's preview, never a
// GET), reminded (once, through the job engine, across instances and restarts), seen (the list,
// the funnel) and only true states (the first admin's own invitation). Every new event reaches a
// webhook receiver on loopback. One app (and one database) for most steps.

t.setTimeout(240_000)

const FAST = { JOBS_POLL_MS: '500', AUTH_RATE_LIMIT_PER_MINUTE: '1000' }

async function until<T> (what: string, fn: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const v = await fn()
    if (v !== undefined) return v
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}

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
async function invite (who: SignedIn, email: string): Promise<{ id: string, token: string }> {
  const seen = smtp.messages.length
  const res = await h.inject({ method: 'POST', url: '/api/users/invite', headers: json(who.cookie), payload: { email, role: 'member' } })
  if (res.statusCode !== 200) throw new Error(`invite ${email}: ${res.statusCode} ${res.body}`)
  const mail = await smtp.nextMessage(seen)
  const token = /token=([A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? ''
  const row = await h.db.query<{ id: string }>('SELECT id FROM invitations WHERE email = $1 AND status = $2', [email, 'pending'])
  return { id: row.rows[0]?.id ?? '', token }
}

async function listed (app: TestApp, cookie: string, id: string): Promise<Record<string, unknown>> {
  const res = await app.inject({ method: 'GET', url: '/api/invitations?status=pending&limit=100', headers: { cookie } })
  assertContract(t, 'GET', '/api/invitations', res)
  const found = (res.json().items as Array<Record<string, unknown>>).find(i => i.id === id)
  if (found === undefined) throw new Error(`invitation ${id} not listed`)
  return found
}

const eventsOf = async (action: string, id: string): Promise<number> => (await h.db.query<{ n: number }>(
  'SELECT count(*)::int AS n FROM audit_events WHERE action = $1 AND target_id = $2', [action, id]
)).rows[0]?.n ?? 0

t.test('viewed: a GET of the signup page records nothing; the first preview records once', async t => {
  const inv = await invite(admin, 'viewer@example.com')
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
