import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startBlackhole, startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { insertUser } from '../../src/db/users.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { LOGIN_LINKS_PER_EMAIL, LOGIN_TOKEN_TTL_MS } from '../../src/auth/login-link.js'

// E-mail login links through a real SMTP peer on loopback: no account enumeration, single use,
// 15-minute expiry on the app clock, and a per-address cap.

const post = async (h: TestApp, url: string, body: unknown) => {
  const res = await h.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body)
  })
  return res
}

function linkIn (mail: CaughtMail, appUrl: string): string {
  const m = new RegExp(
    `${appUrl.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/login\\?token=([A-Za-z0-9_-]+)`
  ).exec(mail.text)
  if (m === null) throw new Error(`no login link in: ${mail.text}`)
  return m[1] as string
}

async function setup (t: Parameters<typeof build>[0]) {
  const smtp = await startSmtp(t)
  const h = await build(
    t, { env: { SMTP_URL: smtp.url, APP_URL: 'http://app.example.test', AUTH_RATE_LIMIT_PER_MINUTE: '1000' } }
  )
  const ws = await h.signIn({ role: 'admin', workspaceName: 'Acme' })
  await insertUser(
    h.db, { workspaceId: ws.workspaceId, email: 'ada@example.com', name: 'Ada', role: 'member', now: h.clock.now() }
  )
  return { h, smtp, ws }
}

t.test('login links through a real SMTP peer', async t => {
  // One app for the whole flow (building one costs seconds); each step uses its own address.
  const { h, smtp, ws } = await setup(t)
  for (const email of ['bob@example.com', 'cy@example.com', 'dee@example.com']) {
    await insertUser(h.db, { workspaceId: ws.workspaceId, email, name: null, role: 'member', now: h.clock.now() })
  }
  const mailTo = async (email: string) => {
    const seen = smtp.messages.length
    await post(h, '/api/auth/login-link', { email })
    const mail = await smtp.nextMessage(seen)
    t.same(mail.to, [email.trim().toLowerCase()])
    return linkIn(mail, 'http://app.example.test')
  }

  await t.test('known and unknown addresses get byte-identical answers; only the known one gets mail', async t => {
    const known = await post(h, '/api/auth/login-link', { email: 'ada@example.com' })
    const unknown = await post(h, '/api/auth/login-link', { email: 'nobody@example.com' })
    for (const r of [known, unknown]) assertContract(t, 'POST', '/api/auth/login-link', r)
    t.equal(known.statusCode, 202)
    t.equal(unknown.statusCode, known.statusCode)
    t.equal(unknown.rawPayload.compare(known.rawPayload), 0, 'identical body bytes')
    t.equal(unknown.headers['content-type'], known.headers['content-type'])
    t.equal(unknown.headers['content-length'], known.headers['content-length'])
    t.same(Object.keys(unknown.headers).sort(), Object.keys(known.headers).sort(), 'the same headers')
    // Every answer binds the browser alike (known address or not): no session, only the binding.
    for (const r of [known, unknown]) t.same(r.cookies.map(c => c.name), ['login_link_browser'])

    await h.app.services.auth.idle()
    t.equal(smtp.messages.length, 1, 'one e-mail, to the known address only')
    t.same(smtp.messages[0]?.to, ['ada@example.com'])
    t.match(
      smtp.messages[0]?.html, /href="http:\/\/app\.example\.test\/login\?token=/, 'the HTML part links to APP_URL'
    )

    // Case does not matter; surrounding spaces are not an address (400, as format email says);
    // a disabled account gets nothing.
    t.equal((await post(h, '/api/auth/login-link', { email: '  ada@example.com ' })).statusCode, 400)
    await post(h, '/api/auth/login-link', { email: 'ADA@Example.COM' })
    await h.app.services.auth.idle()
    t.equal(smtp.messages.length, 2)
    await h.db.query("UPDATE users SET status = 'suspended', suspended_at = now() WHERE email = 'dee@example.com'")
    const disabled = await post(h, '/api/auth/login-link', { email: 'dee@example.com' })
    t.equal(disabled.rawPayload.compare(known.rawPayload), 0)
    await h.app.services.auth.idle()
    t.equal(smtp.messages.length, 2, 'no link for a disabled account')

    const bad = await post(h, '/api/auth/login-link', { email: 'not-an-email' })
    t.equal(bad.statusCode, 400)
    assertContract(t, 'POST', '/api/auth/login-link', bad)
  })

  await t.test('the e-mailed link signs in once; the session works; reuse is 410', async t => {
    const token = await mailTo('bob@example.com')
    t.equal(smtp.messages.at(-1)?.subject, 'Your sign-in link')
    const res = await post(h, '/api/auth/verify', { token })
    assertContract(t, 'POST', '/api/auth/verify', res)
    t.equal(res.statusCode, 200)
    t.match(res.json(), { user: { email: 'bob@example.com', name: null, role: 'member' }, workspace: { name: 'Acme' } })
    const cookie = res.cookies.find(c => c.name === SESSION_COOKIE)
    t.equal(cookie?.httpOnly, true)
    const me = await h.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { cookie: `${SESSION_COOKIE}=${cookie?.value}` }
    })
    t.equal(me.statusCode, 200)
    t.equal(me.json().user.email, 'bob@example.com')

    const audit = await h.db.query<{ payload: unknown }>(
      "SELECT payload FROM audit_events WHERE action = 'session.login' AND actor_label = 'bob@example.com'"
    )
    t.same(audit.rows, [{ payload: { method: 'login_link' } }], 'the login is audited')
    const method = await h.db.query<{ method: string }>(
      "SELECT s.method FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = 'bob@example.com'"
    )
    t.same(method.rows, [{ method: 'login_link' }])

    const reuse = await post(h, '/api/auth/verify', { token })
    assertContract(t, 'POST', '/api/auth/verify', reuse)
    t.equal(reuse.statusCode, 410)
    t.equal(reuse.json().code, 'TOKEN_USED')
    t.equal(reuse.cookies.length, 0)

    const forged = await post(
      h, '/api/auth/verify', { token: token.slice(0, -2) + (token.endsWith('xx') ? 'yy' : 'xx') }
    )
    assertContract(t, 'POST', '/api/auth/verify', forged)
    t.equal(forged.statusCode, 400)
    t.equal(forged.json().code, 'TOKEN_INVALID')

    // Two concurrent verifies of one fresh link: one session.
    const second = await mailTo('bob@example.com')
    const both = await Promise.all([
      post(h, '/api/auth/verify', { token: second }), post(h, '/api/auth/verify', { token: second })
    ])
    for (const r of both) assertContract(t, 'POST', '/api/auth/verify', r)
    t.same(both.map(r => r.statusCode).sort(), [200, 410])
  })

  await t.test('the preview names the account without using the link, and tells this browser from another', async t => {
    const seen = smtp.messages.length
    const asked = await post(h, '/api/auth/login-link', { email: 'bob@example.com' })
    const bound = asked.cookies.find(c => c.name === 'login_link_browser')
    t.equal(bound?.httpOnly, true, 'the link is bound to this browser by an HttpOnly cookie')
    t.equal(bound?.sameSite, 'Strict')
    t.equal(bound?.path, '/api', 'sent to the previews of every e-mailed sign-in link (/api)')
    const token = linkIn(await smtp.nextMessage(seen), 'http://app.example.test')
    const preview = async (cookie?: string) => await h.inject({
      method: 'POST',
      url: '/api/auth/login-link/preview',
      headers: { 'content-type': 'application/json', ...(cookie !== undefined ? { cookie } : {}) },
      payload: JSON.stringify({ token })
    })
    const here = await preview(`login_link_browser=${bound?.value ?? ''}`)
    assertContract(t, 'POST', '/api/auth/login-link/preview', here)
    t.match(here.json(), { email: 'bob@example.com', workspace: { name: 'Acme' }, sameBrowser: true })
    const elsewhere = await preview()
    t.equal(elsewhere.json().sameBrowser, false, 'opened in a browser without the cookie')
    const forged = await preview(`login_link_browser=${'A'.repeat(43)}`)
    t.equal(forged.json().sameBrowser, false, 'or with another browser\'s cookie')
    t.equal((await post(h, '/api/auth/verify', { token })).statusCode, 200, 'previews did not use the link')
    const used = await preview()
    assertContract(t, 'POST', '/api/auth/login-link/preview', used)
    t.equal(used.json().code, 'TOKEN_USED')
    const unknown = await post(h, '/api/auth/login-link/preview', { token: 'x'.repeat(43) })
    assertContract(t, 'POST', '/api/auth/login-link/preview', unknown)
    t.equal(unknown.json().code, 'TOKEN_INVALID')
  })

  await t.test('a link expires after 15 minutes on the app clock', async t => {
    const token = await mailTo('cy@example.com')
    h.clock.advance(LOGIN_TOKEN_TTL_MS + 1)
    const res = await post(h, '/api/auth/verify', { token })
    assertContract(t, 'POST', '/api/auth/verify', res)
    t.equal(res.statusCode, 410)
    t.equal(res.json().code, 'TOKEN_EXPIRED')
    t.equal(res.cookies.length, 0)
  })

  await t.test('at most 5 links per address per 15 minutes; still 202, nothing sent beyond', async t => {
    h.clock.advance(LOGIN_TOKEN_TTL_MS + 1) // a fresh window for ada after the steps above
    const before = smtp.messages.length
    const answers: Array<Awaited<ReturnType<typeof post>>> = []
    for (let i = 0; i < LOGIN_LINKS_PER_EMAIL + 3; i++) {
      answers.push(
        await post(h, '/api/auth/login-link', { email: 'ada@example.com' })
      )
    }
    t.ok(
      answers.every(a => a.statusCode === 202 && a.rawPayload.compare(answers[0]?.rawPayload as Buffer) === 0),
      'every answer the same 202'
    )
    await h.app.services.auth.idle()
    t.equal(
      smtp.messages.length - before, LOGIN_LINKS_PER_EMAIL, `${LOGIN_LINKS_PER_EMAIL} e-mails, not ${answers.length}`
    )

    h.clock.advance(15 * 60_000 + 1)
    await post(h, '/api/auth/login-link', { email: 'ada@example.com' })
    await h.app.services.auth.idle()
    t.equal(smtp.messages.length - before, LOGIN_LINKS_PER_EMAIL + 1, 'a new window allows a new link')
  })
})

t.test('the answer does not wait for SMTP; the contract\'s per-IP limit applies', async t => {
  // An SMTP server that accepts the connection and never speaks: were the send on the response
  // path, each answer would take the SMTP timeout (1.5 s) or fail.
  const blackhole = await startBlackhole(t)
  const h = await build(
    t, { env: { SMTP_URL: blackhole.url, SMTP_TIMEOUT_MS: '1500', AUTH_RATE_LIMIT_PER_MINUTE: '3' } }
  )
  const ws = await h.signIn({ role: 'admin' })
  const statuses: number[] = []
  const times: number[] = []
  for (const email of [ws.email, 'nobody@example.com', ws.email, ws.email]) {
    const started = performance.now()
    const res = await post(h, '/api/auth/login-link', { email })
    times.push(performance.now() - started)
    assertContract(t, 'POST', '/api/auth/login-link', res)
    statuses.push(res.statusCode)
  }
  t.comment(`answer times (ms): ${times.map(x => x.toFixed(1)).join(', ')}`)
  t.ok(times.slice(0, 3).every(ms => ms < 1500), 'answered before the SMTP server could have replied')
  t.same(statuses, [202, 202, 202, 429], 'AUTH_RATE_LIMIT_PER_MINUTE=3 per client IP')
})
