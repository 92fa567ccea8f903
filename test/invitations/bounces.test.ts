import t from 'tap'
import { randomBytes } from 'node:crypto'
import nodemailer from 'nodemailer'
import { SMTPServer } from 'smtp-server'
import { Webhook } from 'standardwebhooks'
import type { TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invited } from '../helpers/invite.js'
import { startFakeHttp, type FakeHttp, type FakeRequest } from '../helpers/fake-http.js'
import { buildWithSlack, install, type SlackFake } from '../helpers/slack.js'
import { until } from '../helpers/service-process.js'

// Bounces of invitation e-mails, end to end on loopback. The service sends through a real SMTP
// relay (smtp-server); the relay hands each message to a second smtp-server acting as the
// recipient's mail server (MX), which refuses unknown users (550 5.1.1) and full mailboxes
// (452 4.2.2). The relay then does what a real MTA does: it writes an RFC 3464 report and mails it,
// from the null sender, to the envelope sender it was given — the invitation's signed return path
// — at the service's bounce listener. Resend's webhook is signed with the Standard Webhooks
// reference implementation (`standardwebhooks`: Svix's scheme) and posted to the service.

t.setTimeout(240_000)

const BOUNCE_DOMAIN = 'bounces.example.test'
const RESEND_SECRET = 'whsec_' + randomBytes(24).toString('base64')
const FAST = { JOBS_POLL_MS: '500', JOBS_MAINTENANCE_SECONDS: '1', WEBHOOK_TIMEOUT_MS: '2000' }

async function listen (server: SMTPServer, t: { teardown(fn: () => unknown): void }): Promise<number> {
  server.on('error', () => {})
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  t.teardown(async () => { await new Promise<void>(resolve => { server.close(() => { resolve() }) }) })
  return (server.server.address() as { port: number }).port
}

/** The recipient's mail server: `alan@` is unknown (550), `full@` has a full mailbox (452), others are taken. */
async function startMx (t: { teardown(fn: () => unknown): void }): Promise<number> {
  return await listen(new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onRcptTo (address, _session, cb) {
      const local = address.address.split('@')[0]
      const refuse = (code: number, text: string) => { cb(Object.assign(new Error(text), { responseCode: code })) }
      if (local === 'alan') refuse(550, `5.1.1 <${address.address}>: Recipient address rejected: User unknown`)
      else if (local === 'full') refuse(452, `4.2.2 <${address.address}>: Mailbox full, try again later`)
      else cb()
    },
    onData (stream, _session, cb) { stream.resume(); stream.on('end', () => { cb() }) }
  }), t)
}

interface Dsn { returnPath: string, action: 'failed' | 'delayed', reply: string }

/**
 * The relay: takes the service's message (250, queued), delivers it to the MX, and mails a DSN to
 * the envelope sender when the MX refuses. Where that sender's domain is BOUNCE_DOMAIN, its "MX"
 * is the bounce listener (`bounceUrl`).
 */
async function startRelay (t: { teardown(fn: () => unknown): void }, mxPort: number) {
  const state = {
    bounceUrl: '',
    /** Every message the service handed over: envelope sender and recipients. */
    received: [] as Array<{ from: string, to: string[], raw: Buffer }>,
    /** Every DSN the relay mailed, with the bounce listener's answer. */
    dsns: [] as Array<Dsn & { answer: string }>,
    /** DSNs the bounce listener did not take (none expected). */
    errors: [] as string[]
  }
  const mx = nodemailer.createTransport({ host: '127.0.0.1', port: mxPort, secure: false, ignoreTLS: true })
  const forward = async (from: string, to: string, raw: Buffer): Promise<void> => {
    try {
      await mx.sendMail({ envelope: { from, to }, raw })
    } catch (err) {
      const e = err as { responseCode?: number, response?: string }
      if (e.responseCode === undefined || from === '') return
      const dsn: Dsn = { returnPath: from, action: e.responseCode >= 500 ? 'failed' : 'delayed', reply: e.response ?? '' }
      const listener = nodemailer.createTransport({ url: state.bounceUrl, ignoreTLS: true })
      const sent = await listener.sendMail({ envelope: { from: '', to: from }, raw: dsnMessage(dsn, to, raw) })
      state.dsns.push({ ...dsn, answer: sent.response })
    }
  }
  const port = await listen(new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onData (stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address
        const to = session.envelope.rcptTo.map(r => r.address)
        state.received.push({ from, to, raw: Buffer.concat(chunks) })
        cb() // queued: delivery happens after the answer, as a relay does it
        for (const rcpt of to) {
          forward(from, rcpt, Buffer.concat(chunks)).catch((err: Error) => { state.errors.push(err.message) })
        }
      })
    }
  }), t)
  return { url: `smtp://127.0.0.1:${port}`, state }
}

/** An RFC 3464 report of the relay, as Postfix writes one (the original's headers attached). */
function dsnMessage (d: Dsn, recipient: string, original: Buffer): string {
  const headers = original.toString('utf8').split(/\r?\n\r?\n/)[0] ?? ''
  const status = /\b([245]\.\d+\.\d+)\b/.exec(d.reply)?.[1] ?? (d.action === 'failed' ? '5.0.0' : '4.0.0')
  return [
    'From: Mail Delivery System <MAILER-DAEMON@relay.example.test>',
    `To: ${d.returnPath}`,
    `Subject: ${d.action === 'failed' ? 'Undelivered Mail Returned to Sender' : 'Delayed Mail (still being retried)'}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="dsn-boundary"',
    '',
    '--dsn-boundary',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This is the mail system at host relay.example.test.',
    d.action === 'failed' ? 'Your message could not be delivered to one or more recipients.' : 'Delivery is delayed.',
    '',
    '--dsn-boundary',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; relay.example.test',
    'Arrival-Date: Mon, 23 Nov 2026 09:45:56 +0000',
    '',
    `Final-Recipient: rfc822; ${recipient}`,
    `Original-Recipient: rfc822;${recipient}`,
    `Action: ${d.action}`,
    `Status: ${status}`,
    'Remote-MTA: dns; mx.example.com',
    `Diagnostic-Code: smtp; ${d.reply}`,
    '',
    '--dsn-boundary',
    'Content-Type: text/rfc822-headers',
    '',
    headers,
    '',
    '--dsn-boundary--',
    ''
  ].join('\r\n')
}

interface Row {
  delivery_status: string
  bounced_at: Date | null
  bounce_reason: string | null
  delivery_error: string | null
}

async function invitationRow (h: TestApp, id: string): Promise<Row> {
  const r = await h.db.query<Row>(
    'SELECT delivery_status, bounced_at, bounce_reason, delivery_error FROM invitations WHERE id = $1', [id]
  )
  return r.rows[0] as Row
}

/** POST a Resend event; signed with `secret` (the endpoint's by default) unless `unsigned`. */
async function resendEvent (
  h: TestApp, body: unknown,
  o: { secret?: string, unsigned?: boolean, skewSeconds?: number, id?: string, at?: Date } = {}
) {
  const payload = JSON.stringify(body)
  const id = o.id ?? `msg_${randomBytes(8).toString('hex')}`
  const at = o.at ?? new Date(h.clock.now().getTime() + (o.skewSeconds ?? 0) * 1000)
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (o.unsigned !== true) {
    headers['svix-id'] = id
    headers['svix-timestamp'] = String(Math.floor(at.getTime() / 1000))
    headers['svix-signature'] = new Webhook(o.secret ?? RESEND_SECRET).sign(id, at, payload)
  }
  return await h.inject({ method: 'POST', url: '/api/email-events/resend', headers, payload })
}

const bounced = (email: string, tags?: Record<string, string>) => ({
  type: 'email.bounced',
  created_at: new Date(Date.now() + 60_000).toISOString(),
  data: {
    email_id: '56761188-7520-42d8-8898-ff6fc54ce618',
    from: 'Workspace <no-reply@example.com>',
    to: [email],
    subject: 'You are invited',
    bounce: { type: 'Permanent', subType: 'General', message: "The recipient's mail server permanently rejected the e-mail." },
    ...(tags !== undefined ? { tags } : {})
  }
})

const hooks = (fake: FakeHttp): FakeRequest[] => fake.requests.filter(r => r.path === '/hook')
const hookAbout = (r: FakeRequest): string => (r.json as { data: { invitationId: string } }).data.invitationId

t.test('bounces: DSNs through a real relay, Resend\'s signed webhook, forged and unsigned reports', async t => {
  const mxPort = await startMx(t)
  const relay = await startRelay(t, mxPort)
  const { h, slack }: { h: TestApp, slack: SlackFake } = await buildWithSlack(t, {
    env: {
      ...FAST,
      SMTP_URL: relay.url,
      BOUNCE_DOMAIN,
      BOUNCE_SMTP_PORT: '0',
      BOUNCE_SMTP_MESSAGES_PER_PEER: '60',
      RESEND_WEBHOOK_SECRET: RESEND_SECRET
    }
  })
  const bounceUrl = await h.app.listenBounces()
  t.match(bounceUrl, /^smtp:\/\/127\.0\.0\.1:\d+$/, 'the bounce listener is up (BOUNCE_SMTP_PORT=0: any free port)')
  relay.state.bounceUrl = bounceUrl ?? ''

  const admin = await h.signIn({ role: 'admin', email: 'boss@example.com' })
  t.equal((await install(h, admin)).statusCode, 302, 'Slack installed')
  slack.emails.set('U0BOSS', 'boss@example.com')
  const receiver = await startFakeHttp(t)
  receiver.on('POST /hook', () => ({ status: 204 }))
  const sub = await h.inject({
    method: 'POST',
    url: '/api/webhook-endpoints',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { url: `${receiver.url}/hook`, eventTypes: ['invitation.bounced'] }
  })
  t.equal(sub.statusCode, 201, sub.body)
  const hookSecret = sub.json().secret as string

  await t.test('a hard bounce (5.1.1) from the recipient\'s server, reported by the relay, marks that invitation', async t => {
    const other = (await invited(h, admin, { email: 'grace@example.com' })).id
    const alan = (await invited(h, admin, { email: 'alan@example.com' })).id
    const sent = await until('the relay took alan\'s e-mail', () =>
      relay.state.received.find(m => m.to.includes('alan@example.com')))
    t.match(sent.from, new RegExp(`^bounces\\+${alan}\\.[0-9a-f]{16}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`),
      'the envelope sender is the invitation\'s own signed return path')
    const dsn = await until('the DSN was taken', () => relay.state.dsns.find(d => d.returnPath === sent.from))
    t.match(dsn.answer, /^250/, 'the bounce listener took the report (after recording it)')
    const row = await invitationRow(h, alan)
    t.equal(row.delivery_status, 'bounced')
    t.ok(row.bounced_at instanceof Date)
    t.match(row.bounce_reason, /^5\.1\.1 smtp; 550 5\.1\.1 <alan@example\.com>: Recipient address rejected: User unknown/)
    t.equal((await invitationRow(h, other)).delivery_status, 'sent', 'the other invitation is untouched')

    const list = await h.inject({ method: 'GET', url: '/api/invitations?status=pending', headers: { cookie: admin.cookie } })
    assertContract(t, 'GET', '/api/invitations?status=pending', list)
    const seen = (list.json().items as Array<Record<string, unknown>>).find(i => i.id === alan)
    t.match(seen, { deliveryStatus: 'bounced', bouncedAt: String, bounceReason: /User unknown/ }, 'the list shows it')

    const audit = await h.db.query<{ actor_type: string, source: string, actor_label: string }>(
      "SELECT actor_type, source, actor_label FROM audit_events WHERE action = 'invitation.bounced' AND target_id = $1",
      [alan])
    t.same(audit.rows, [{ actor_type: 'system', source: 'system', actor_label: 'delivery status notification' }],
      'audited once, as the system')

    const hook = await until('invitation.bounced delivered', () =>
      hooks(receiver).find(r => hookAbout(r) === alan))
    const event = new Webhook(hookSecret).verify(hook.body, {
      'webhook-id': String(hook.headers['webhook-id']),
      'webhook-timestamp': String(hook.headers['webhook-timestamp']),
      'webhook-signature': String(hook.headers['webhook-signature'])
    })
    t.match(event, {
      type: 'invitation.bounced',
      source: 'system',
      actor: { type: 'system', id: null },
      data: { invitationId: alan, email: 'alan@example.com', deliveryStatus: 'bounced', reason: /User unknown/ }
    }, 'the event reaches the workspace\'s webhook, signed')

    const dm = await until('the inviter\'s Slack DM', () =>
      slack.posts().find(p => p.channel === 'U0BOSS' && p.text.includes('alan@example.com')))
    t.match(dm.text, /bounced: `5\.1\.1 [^`]*User unknown[^`]*`\. /, 'the inviter hears it in Slack, the reason as plain text (a code span)')

    // The same report again (a relay retrying) changes nothing more.
    const again = nodemailer.createTransport({ url: bounceUrl ?? '', ignoreTLS: true })
    await again.sendMail({
      envelope: { from: '', to: sent.from },
      raw: dsnMessage({ returnPath: sent.from, action: 'failed', reply: '550 5.1.1 gone' }, 'alan@example.com', Buffer.from(''))
    })
    const count = await h.db.query("SELECT 1 FROM audit_events WHERE action = 'invitation.bounced' AND target_id = $1", [alan])
    t.equal(count.rows.length, 1, 'a repeated report is no second event')
  })

  await t.test('a temporary failure (4.2.2) is recorded, and nothing else', async t => {
    const full = (await invited(h, admin, { email: 'full@example.com' })).id
    const sent = await until('the relay took the e-mail', () =>
      relay.state.received.find(m => m.to.includes('full@example.com')))
    await until('the delay DSN was taken', () => relay.state.dsns.find(d => d.returnPath === sent.from))
    const row = await invitationRow(h, full)
    t.equal(row.delivery_status, 'sent', 'still sent: the relay retries')
    t.equal(row.bounced_at, null)
    t.match(row.delivery_error, /^4\.2\.2 smtp; 452 4\.2\.2 .*Mailbox full/, 'the reason is the last delivery error')
    const events = await h.db.query<{ action: string }>('SELECT action FROM audit_events WHERE target_id = $1 ORDER BY id', [full])
    t.same(events.rows.map(r => r.action), ['invitation.created', 'invitation.delivery_delayed'], 'no bounce event')
  })

  await t.test('a forged return path is refused before any data and changes nothing', async t => {
    const ada = (await invited(h, admin, { email: 'ada@example.com' })).id
    const sent = await until('the relay took the e-mail', () => relay.state.received.find(m => m.to.includes('ada@example.com')))
    const mac = sent.from.split('@')[0]?.split('.')[1] ?? ''
    const forged = nodemailer.createTransport({ url: bounceUrl ?? '', ignoreTLS: true })
    const wrongMac = `bounces+${ada}.${mac === '0'.repeat(16) ? '1'.repeat(16) : '0'.repeat(16)}@${BOUNCE_DOMAIN}`
    const unknownId = `bounces+00000000-0000-4000-8000-000000000000.${mac}@${BOUNCE_DOMAIN}`
    const otherDomain = `bounces+${ada}.${mac}@elsewhere.example`
    for (const to of [wrongMac, unknownId, otherDomain]) {
      const raw = dsnMessage({ returnPath: to, action: 'failed', reply: '550 5.1.1 forged' }, 'ada@example.com', Buffer.from(''))
      const refused = await forged.sendMail({ envelope: { from: '', to }, raw }).then(() => null, (err: unknown) => err)
      t.match(refused, { responseCode: 550 }, `refused at RCPT TO: ${to}`)
    }
    const row = await invitationRow(h, ada)
    t.same([row.delivery_status, row.bounced_at, row.delivery_error], ['sent', null, null], 'ada\'s invitation is unchanged')
  })

  await t.test('Resend\'s webhook: signed → bounced; unsigned, forged or stale → 401 and nothing changes', async t => {
    const bob = (await invited(h, admin, { email: 'bob@example.com' })).id
    const carol = (await invited(h, admin, { email: 'carol@example.com' })).id
    const body = bounced('bob@example.com', { invitation_id: bob })
    for (const [what, o] of [
      ['unsigned', { unsigned: true }],
      ['signed with another secret', { secret: 'whsec_' + randomBytes(24).toString('base64') }],
      ['signed ten minutes ago', { skewSeconds: -600 }]
    ] as const) {
      const res = await resendEvent(h, body, o)
      t.equal(res.statusCode, 401, what)
      assertContract(t, 'POST', '/api/email-events/resend', res)
      t.equal(res.json().code, 'SIGNATURE_INVALID')
    }
    t.equal((await invitationRow(h, bob)).delivery_status, 'sent', 'nothing changed')

    const res = await resendEvent(h, body)
    t.equal(res.statusCode, 200, res.body)
    assertContract(t, 'POST', '/api/email-events/resend', res)
    t.same(res.json(), { outcome: 'bounced', invitations: 1 })
    const row = await invitationRow(h, bob)
    t.equal(row.delivery_status, 'bounced')
    t.match(row.bounce_reason, /^Permanent: General: The recipient's mail server permanently rejected/)
    t.equal((await invitationRow(h, carol)).delivery_status, 'sent', 'only the tagged invitation')

    // Without a tag, the bounced address names the pending invitations e-mailed to it.
    const byAddress = await resendEvent(h, bounced('carol@example.com'))
    t.same(byAddress.json(), { outcome: 'bounced', invitations: 1 })
    t.equal((await invitationRow(h, carol)).delivery_status, 'bounced')
    const audit = await h.db.query<{ actor_label: string }>(
      "SELECT actor_label FROM audit_events WHERE action = 'invitation.bounced' AND target_id = $1", [carol])
    t.same(audit.rows, [{ actor_label: 'e-mail provider (Resend)' }])

    const other = await resendEvent(h, { type: 'email.delivered', created_at: new Date().toISOString(), data: { to: ['x@example.com'] } })
    t.same(other.json(), { outcome: 'ignored', invitations: 0 }, 'other event types are acknowledged and ignored')
    await until('both provider bounces delivered by webhooks', () =>
      [bob, carol].every(id => hooks(receiver).some(r => hookAbout(r) === id)) || undefined)
  })
  const auditOf = async (id: string, action: string): Promise<number> => (await h.db.query(
    'SELECT 1 FROM audit_events WHERE action = $1 AND target_id = $2', [action, id])).rows.length
  const resendInvitation = async (id: string): Promise<void> => {
    const res = await h.inject({ method: 'POST', url: `/api/invitations/${id}/resend`, headers: { cookie: admin.cookie } })
    if (res.statusCode !== 200) throw new Error(`resend ${id}: ${res.statusCode} ${res.body}`)
  }
  const lastSentAt = async (id: string): Promise<Date> => (await h.db.query<{ last_sent_at: Date }>(
    'SELECT last_sent_at FROM invitations WHERE id = $1', [id])).rows[0]?.last_sent_at ?? new Date(0)
  const listener = () => nodemailer.createTransport({ url: bounceUrl ?? '', ignoreTLS: true })

  await t.test('replay: a signed delivery sent again within its signature window is applied once', async t => {
    const dave = (await invited(h, admin, { email: 'dave@example.com' })).id
    const delayed = { type: 'email.delivery_delayed', created_at: h.clock.now().toISOString(), data: { to: ['dave@example.com'], tags: { invitation_id: dave } } }
    const signed = { id: `msg_${randomBytes(8).toString('hex')}`, at: h.clock.now() }
    const first = await resendEvent(h, delayed, signed)
    t.same(first.json(), { outcome: 'recorded', invitations: 1 })
    for (const later of [0, 60, 180]) { // 0, 60 and 240 s after it was signed
      h.clock.advance(later * 1000)
      const again = await resendEvent(h, delayed, signed) // the very same id, timestamp, signature and body
      t.equal(again.statusCode, 200, `replayed ${later} s later: still signed within its window`)
      assertContract(t, 'POST', '/api/email-events/resend', again)
      t.same(again.json(), { outcome: 'ignored', invitations: 0 }, 'and applied no more')
    }
    t.equal(await auditOf(dave, 'invitation.delivery_delayed'), 1, 'one audit row for one delivery')
    h.clock.advance(120_000)
    const late = await resendEvent(h, delayed, signed)
    t.equal(late.statusCode, 401, 'past its window its signature is refused anyway')

    // A bounce replayed after the invitation was re-sent does not bounce the new send.
    const bounce = bounced('dave@example.com', { invitation_id: dave })
    const b = { id: `msg_${randomBytes(8).toString('hex')}`, at: h.clock.now() }
    t.same((await resendEvent(h, bounce, b)).json(), { outcome: 'bounced', invitations: 1 })
    await resendInvitation(dave)
    t.equal((await invitationRow(h, dave)).delivery_status, 'sent', 're-sent: a new e-mail')
    t.same((await resendEvent(h, bounce, b)).json(), { outcome: 'ignored', invitations: 0 }, 'the replayed bounce is ignored')
    t.equal((await invitationRow(h, dave)).delivery_status, 'sent', 'and the new send is not bounced')
    t.equal(await auditOf(dave, 'invitation.bounced'), 1)
  })

  await t.test('order: a bounce of an e-mail older than the last send is recorded, not applied', async t => {
    // Resend: the report names the e-mail it is about by its creation time.
    const erin = (await invited(h, admin, { email: 'erin@example.com' })).id
    const firstSend = await lastSentAt(erin)
    h.clock.advance(10 * 60_000)
    await resendInvitation(erin)
    const secondSend = await lastSentAt(erin)
    t.ok(secondSend > firstSend, 'the re-send is the last send')
    const about = (at: Date) => ({ ...bounced('erin@example.com', { invitation_id: erin }), created_at: h.clock.now().toISOString(), data: { ...bounced('erin@example.com', { invitation_id: erin }).data, created_at: at.toISOString() } })
    const old = await resendEvent(h, about(firstSend))
    t.same(old.json(), { outcome: 'recorded', invitations: 0 }, 'a report about the first e-mail: recorded')
    t.equal((await invitationRow(h, erin)).delivery_status, 'sent', 'the new send is not marked bounced')
    t.equal(await auditOf(erin, 'invitation.bounce_superseded'), 1, 'the report is in the audit trail')
    t.equal(await auditOf(erin, 'invitation.bounced'), 0, 'and is no bounce event')
    const current = await resendEvent(h, about(secondSend))
    t.same(current.json(), { outcome: 'bounced', invitations: 1 }, 'a report about the last e-mail applies')

    // A DSN: the returned message's Date header names the send (the relay attaches its headers).
    const frank = (await invited(h, admin, { email: 'frank@example.com' })).id
    const raw1 = await until('the first e-mail', () => relay.state.received.find(m => m.to.includes('frank@example.com'))?.raw)
    h.clock.advance(10 * 60_000)
    await resendInvitation(frank)
    const raw2 = await until('the second e-mail', () => relay.state.received.filter(m => m.to.includes('frank@example.com'))[1]?.raw)
    const returnPath = relay.state.received.find(m => m.to.includes('frank@example.com'))?.from ?? ''
    const dsnAbout = (raw: Buffer) => dsnMessage({ returnPath, action: 'failed', reply: '550 5.1.1 gone' }, 'frank@example.com', raw)
    const stale = await listener().sendMail({ envelope: { from: '', to: returnPath }, raw: dsnAbout(raw1) })
    t.match(stale.response, /^250/, 'taken')
    t.equal((await invitationRow(h, frank)).delivery_status, 'sent', 'a DSN about the first e-mail does not bounce the second')
    t.equal(await auditOf(frank, 'invitation.bounce_superseded'), 1, 'recorded')
    await listener().sendMail({ envelope: { from: '', to: returnPath }, raw: dsnAbout(raw2) })
    t.equal((await invitationRow(h, frank)).delivery_status, 'bounced', 'a DSN about the second one applies')
  })

  await t.test('flood: reports per return path and messages per peer are limited; the reason is bounded plain text', async t => {
    const gina = (await invited(h, admin, { email: 'gina@example.com' })).id
    const sent = await until('the e-mail', () => relay.state.received.find(m => m.to.includes('gina@example.com')))
    const raw = (reply: string) => dsnMessage({ returnPath: sent.from, action: 'delayed', reply }, 'gina@example.com', sent.raw)
    const words = '452 4.2.2 ' + '\u202Eevil\u200B<b>*bold*</b>\x07\x1b[31m '.repeat(200)
    const answers: Array<string | number> = []
    for (let i = 0; i < 8; i++) {
      answers.push(await listener().sendMail({ envelope: { from: '', to: sent.from }, raw: raw(words) })
        .then(r => r.response.slice(0, 3), (err: { responseCode?: number }) => err.responseCode ?? -1))
    }
    t.same(answers, ['250', '250', '250', '250', '250', 450, 450, 450], 'five reports an hour for one return path, then 450 before any data')
    t.equal(await auditOf(gina, 'invitation.delivery_delayed'), 5, 'five audit rows, not eight')
    const reason = (await invitationRow(h, gina)).delivery_error ?? ''
    t.ok(reason.length <= 200, `the reason is bounded (${reason.length} characters)`)
    t.match(reason, /^[\x20-\x7E]+$/, 'and is plain printable text: no control, bidi or zero-width characters')

    // Per peer: MAIL FROM counted whatever the recipient; past BOUNCE_SMTP_MESSAGES_PER_PEER (60 here) a minute, 450.
    let refusedAt = 0
    for (let n = 1; n <= 70 && refusedAt === 0; n++) {
      const err = await listener().sendMail({ envelope: { from: '', to: `nobody-${n}@${BOUNCE_DOMAIN}` }, raw: raw('550 5.1.1 x') })
        .then(() => null, (e: { responseCode?: number, command?: string }) => e)
      if (err?.responseCode === 450) refusedAt = n
      else t.equal(err?.responseCode, 550, 'an unknown return path is refused at RCPT TO')
    }
    t.ok(refusedAt > 0 && refusedAt <= 61, `the peer is refused once over its minute (at message ${refusedAt})`)
    h.clock.advance(61_000)
    const after = await listener().sendMail({ envelope: { from: '', to: `nobody@${BOUNCE_DOMAIN}` }, raw: raw('x') })
      .then(() => null, (e: { responseCode?: number }) => e.responseCode)
    t.equal(after, 550, 'a minute later the peer is heard again')
  })
})
