import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// Login CSRF, in a real browser: a page on another site navigates a signed-in person to
// /login?token=<the attacker's own login link>. The landing page used to sign in with whatever
// token its URL carried, so the person's browser ended up in the attacker's account. Now it names
// the account, says the link was requested from another browser, and signs in only on a click;
// a link asked for in this same browser shows no warning.

const tokenIn = (mail: CaughtMail): string => {
  const m = /\/login\?token=([A-Za-z0-9_-]+)/.exec(mail.text)
  if (m === null) throw new Error(`no login link in: ${mail.text}`)
  return m[1] as string
}

t.test('a login link opened by another site does not sign in; one asked for here does, on a click', {
  skip, timeout: 120_000
}, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { SMTP_URL: smtp.url, PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })

  const victim = await h.signIn({ role: 'admin', email: 'victim@example.com' })
  const attacker = await h.signIn({ role: 'admin', email: 'attacker@example.com', workspaceName: 'Attacker Inc' })
  // The attacker asks for a link to their own account (from a script: no browser involved).
  const asked = await fetch(`${base}/api/auth/login-link`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: attacker.email })
  })
  t.equal(asked.status, 202)
  const attackerToken = tokenIn(await smtp.nextMessage(0))

  const other = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><script>location.href = ${JSON.stringify(`${base}/login?token=${attackerToken}`)}</script>`)
  })
  await new Promise<void>(resolve => { other.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => { await new Promise(resolve => other.close(resolve)) })
  const attackerPage = `http://localhost:${(other.address() as AddressInfo).port}/`

  const browser = await launchChromium(t)
  const context = await browser.newContext()
  await context.addCookies([{
    name: SESSION_COOKIE, value: victim.cookie.slice(SESSION_COOKIE.length + 1), url: base, httpOnly: true, sameSite: 'Lax'
  }])
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)
  const signedInAs = async () => await page.evaluate(async () => {
    const r = await fetch('/api/users/me')
    return r.ok ? ((await r.json()) as { user: { email: string } }).user.email : null
  })

  await page.goto(attackerPage)
  await page.waitForURL(`${base}/login?token=${attackerToken}`)
  await t.resolves(page.locator('#confirm').waitFor({ state: 'visible' }), 'the page asks before signing in')
  t.equal(await page.locator('#signin-button').textContent(), `Sign in as ${attacker.email}`, 'naming the account')
  t.equal(await page.locator('#link-workspace').textContent(), 'Attacker Inc')
  t.ok(await page.locator('#other-browser').isVisible(), 'and saying the link was asked for in another browser')
  t.equal(await signedInAs(), victim.email, 'the browser is still signed in as the victim')
  const preview = await h.inject({
    method: 'POST', url: '/api/auth/login-link/preview', payload: { token: attackerToken }
  })
  t.equal(preview.statusCode, 200, 'the attacker\'s link was not used')

  // The person's own link, asked for in this browser: no warning, one click.
  await page.goto(`${base}/login`)
  await page.fill('#email', victim.email)
  const seen = smtp.messages.length
  await page.click('#send-button')
  await page.locator('#status', { hasText: 'sign-in link' }).waitFor({ state: 'visible' })
  const ownToken = tokenIn(await smtp.nextMessage(seen))
  await page.goto(`${base}/login?token=${ownToken}`)
  await page.locator('#confirm').waitFor({ state: 'visible' })
  t.notOk(await page.locator('#other-browser').isVisible(), 'no warning for a link asked for here')
  await page.click('#signin-button')
  await page.waitForURL(`${base}/`)
  // Signed in: the profile screen says as whom (an admin lands on the overview at `/`).
  await page.goto(`${base}/console/profile`)
  await page.locator('#me-email', { hasText: victim.email }).waitFor({ state: 'visible' })
  t.equal(await signedInAs(), victim.email, 'signed in by the click')
  t.same(problems, [], 'no script errors and no CSP violations')
})
