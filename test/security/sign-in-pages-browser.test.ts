import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import type { BrowserContext, Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// Every page that signs a browser in, opened in a signed-in admin's browser with a link someone
// else asked for (login CSRF: one click would have put the admin's browser in the other person's
// account). Each page names the account it signs in to, says when the link was asked for in
// another browser, says whose session continuing ends, and signs in only on a click; opening it
// uses nothing and leaves the admin signed in as the admin:
//   /join/{code}?confirm=…  an invite link's e-mailed confirmation (reached from another site here)
//   /login?token=…          a login link
//   /domain-join?token=…    a verified domain's join link
//   /signup?token=…         an invitation
//   /setup?token=…          the first run: with anyone signed in there is nothing to set up
//   /api/oauth/callback     the identity provider's redirect: refused unless this browser began it
// Then the honest path: a join asked for in this browser shows no warning, and its click signs in.

const linkIn = (mail: CaughtMail, pattern: RegExp): string => {
  const m = pattern.exec(mail.text)
  if (m === null) throw new Error(`no link matching ${String(pattern)} in: ${mail.text}`)
  return m[1] as string
}

t.test('no page signs a signed-in browser into another account without naming it and asking', {
  skip, timeout: 240_000
}, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const idp = await closedPort()
  const h = await build(t, {
    env: {
      SMTP_URL: smtp.url,
      PUBLIC_URL: base,
      AUTH_RATE_LIMIT_PER_MINUTE: '1000',
      // The identity provider configured (its API never reached: the callback is refused before).
      WORKOS_API_KEY: 'sk_test_x',
      WORKOS_CLIENT_ID: 'client_x',
      WORKOS_API_HOSTNAME: '127.0.0.1',
      WORKOS_API_PORT: String(idp),
      WORKOS_API_HTTPS: 'false'
    }
  })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', email: 'ada@example.com', workspaceName: 'Acme Robotics' })
  const post = async (url: string, payload: Record<string, unknown>, cookie?: string) => await h.inject({
    method: 'POST', url, payload, headers: cookie !== undefined ? { cookie } : {}
  })

  const browser = await launchChromium(t)
  const adminBrowser = await browser.newContext()
  await adminBrowser.addCookies([{
    name: SESSION_COOKIE, value: admin.cookie.slice(SESSION_COOKIE.length + 1), url: base, httpOnly: true, sameSite: 'Lax'
  }])
  const page = await adminBrowser.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)
  const signedInAs = async (p: Page = page) => await p.evaluate(async () => {
    const r = await fetch('/api/users/me')
    return r.ok ? ((await r.json()) as { user: { email: string } }).user.email : null
  })
  const currentSession = page.locator('#current-session')
  const sessionNotice = 'This browser is signed in as ada@example.com (Acme Robotics). Continuing signs it out of that account'

  await t.test('/join/{code}?confirm=…: an outsider\'s confirmation, sent from another site', async t => {
    const link = await post('/api/invite-links', {}, admin.cookie)
    t.equal(link.statusCode, 201)
    const code = new URL((link.json() as { url: string }).url).pathname.split('/').pop() as string
    // The outsider asks to join with their own address, from a script (no browser of theirs involved).
    const seen = smtp.messages.length
    t.equal((await post(`/api/join/${code}`, { email: 'mallory@evil.example' })).statusCode, 202)
    const confirmUrl = linkIn(await smtp.nextMessage(seen), /(http\S+\?confirm=[A-Za-z0-9_-]+)/)
    const token = new URL(confirmUrl).searchParams.get('confirm') as string

    const other = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><script>location.href = ${JSON.stringify(confirmUrl)}</script>`)
    })
    await new Promise<void>(resolve => { other.listen(0, '127.0.0.1', resolve) })
    t.teardown(async () => { await new Promise(resolve => other.close(resolve)) })
    await page.goto(`http://localhost:${(other.address() as AddressInfo).port}/`)
    await page.waitForURL(confirmUrl)
    await page.locator('#confirm').waitFor({ state: 'visible' })
    t.equal(await page.locator('#confirm-email').textContent(), 'mallory@evil.example', 'the page names the address')
    t.equal(await page.locator('#confirm-button').textContent(), 'Join as mallory@evil.example', 'and so does the button')
    t.ok(await page.locator('#other-browser').isVisible(), 'it says the link was asked for in another browser')
    t.match(await currentSession.textContent(), `${sessionNotice} and in as mallory@evil.example.`,
      'and whose session joining would end')
    t.equal(await signedInAs(), admin.email, 'still signed in as the admin')
    const preview = await post(`/api/join/${code}/confirm/preview`, { token })
    t.match(preview.json(), { email: 'mallory@evil.example', sameBrowser: false }, 'the confirmation was not used')
    t.equal((await h.db.query("SELECT 1 FROM users WHERE email = 'mallory@evil.example'")).rows.length, 0)
  })

  await t.test('/login?token=…: another account\'s login link', async t => {
    const mallory = await h.signIn({ role: 'member', email: 'mallory@example.com', workspaceName: 'Mallory Inc' })
    const seen = smtp.messages.length
    t.equal((await post('/api/auth/login-link', { email: mallory.email })).statusCode, 202)
    const token = linkIn(await smtp.nextMessage(seen), /\/login\?token=([A-Za-z0-9_-]+)/)
    await page.goto(`${base}/login?token=${token}`)
    await page.locator('#confirm').waitFor({ state: 'visible' })
    t.equal(await page.locator('#signin-button').textContent(), 'Sign in as mallory@example.com')
    t.ok(await page.locator('#other-browser').isVisible(), 'asked for in another browser')
    t.match(await currentSession.textContent(), `${sessionNotice} and in as mallory@example.com.`)
    t.equal(await signedInAs(), admin.email, 'still signed in as the admin')
  })

  await t.test('/domain-join?token=…: a join link asked for by someone else', async t => {
    const now = h.clock.now()
    await h.db.query(
      `INSERT INTO workspace_domains (workspace_id, domain, status, policy, token, verified_at, created_at, updated_at)
       VALUES ($1, 'evil-corp.example', 'verified', 'auto_join', $2, $3, $3, $3)`,
      [admin.workspaceId, 'v'.repeat(43), now])
    const seen = smtp.messages.length
    t.equal((await post('/api/auth/login-link', { email: 'eve@evil-corp.example' })).statusCode, 202)
    const token = linkIn(await smtp.nextMessage(seen), /\/domain-join\?token=([A-Za-z0-9_-]+)/)
    await page.goto(`${base}/domain-join?token=${token}`)
    await page.locator('#join').waitFor({ state: 'visible' })
    t.equal(await page.locator('#join-email').textContent(), 'eve@evil-corp.example', 'the page names the address')
    t.equal(await page.locator('#join-button').textContent(), 'Join Acme Robotics as eve@evil-corp.example')
    t.ok(await page.locator('#other-browser').isVisible(), 'asked for in another browser')
    t.match(await currentSession.textContent(), `${sessionNotice} and in as eve@evil-corp.example.`)
    t.equal(await signedInAs(), admin.email, 'still signed in as the admin')
  })

  await t.test('/signup?token=…: an invitation for someone else', async t => {
    const invited = await post('/api/users/invite', { email: 'bob@example.com', role: 'member' }, admin.cookie)
    const url = (invited.json() as { invitationUrl?: string }).invitationUrl as string
    await page.goto(url)
    await page.locator('#accept').waitFor({ state: 'visible' })
    t.equal(await page.locator('#accept-button').textContent(), 'Accept and sign in as bob@example.com')
    t.match(await currentSession.textContent(), `${sessionNotice} and in as bob@example.com.`)
    t.equal(await signedInAs(), admin.email, 'still signed in as the admin')
  })

  await t.test('/setup?token=…: with a workspace (and so anyone signed in) it offers nothing', async t => {
    await page.goto(`${base}/setup?token=${'s'.repeat(43)}`)
    await page.locator('#status', { hasText: 'set up already' }).waitFor({ state: 'visible' })
    t.notOk(await page.locator('#setup').isVisible(), 'no form')
    t.equal(await signedInAs(), admin.email)
  })

  await t.test('/api/oauth/callback: a provider redirect this browser did not begin is refused', async t => {
    // Someone else starts a sign-in and sends their callback (their code, their state) on.
    const started = await h.inject({ url: '/api/oauth/login' })
    t.equal(started.statusCode, 302)
    const state = new URL(started.headers.location as string).searchParams.get('state') as string
    const res = await page.goto(`${base}/api/oauth/callback?code=their-code&state=${state}`)
    t.equal(res?.status(), 400, 'refused (OAUTH_STATE_INVALID)')
    t.match(await res?.json(), { code: 'OAUTH_STATE_INVALID' })
    await page.goto(`${base}/login`)
    t.equal(await signedInAs(), admin.email, 'still signed in as the admin')
  })

  await t.test('the honest path: a join asked for in this browser, no warning, one click', async t => {
    const link = await post('/api/invite-links', {}, admin.cookie)
    const url = (link.json() as { url: string }).url
    const visitor: BrowserContext = await browser.newContext()
    t.teardown(async () => { await visitor.close() })
    const p = await visitor.newPage()
    p.setDefaultTimeout(20_000)
    const visitorProblems = pageProblems(p)
    await p.goto(url)
    await p.fill('#email', 'grace@example.org')
    const seen = smtp.messages.length
    await p.click('#join-button')
    await p.locator('#status', { hasText: 'confirmation link' }).waitFor({ state: 'visible' })
    const confirmUrl = linkIn(await smtp.nextMessage(seen), /(http\S+\?confirm=[A-Za-z0-9_-]+)/)
    await p.goto(confirmUrl)
    await p.locator('#confirm').waitFor({ state: 'visible' })
    t.notOk(await p.locator('#other-browser').isVisible(), 'no warning: this browser asked')
    t.notOk(await p.locator('#current-session').isVisible(), 'no session to end')
    await p.click('#confirm-button')
    await p.waitForURL(`${base}/`)
    t.equal(await signedInAs(p), 'grace@example.org', 'joined and signed in by the click')
    t.same(visitorProblems, [], 'no script errors and no CSP violations')
  })

  t.same(problems, [], 'no script errors and no CSP violations')
})
