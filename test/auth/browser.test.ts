import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { closedPort, startSmtp, type CaughtMail } from '../helpers/smtp.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// End to end in headless Chromium (Debian package; scripts/setup-browser.sh installs it): an
// admin invites by e-mail, the invitee opens the e-mailed link, accepts, lands on / signed in;
// then signs out and back in with an e-mailed login link. The pages run under their real CSP.

function linkIn (mail: CaughtMail, base: string, path: string): string {
  const m = new RegExp(`${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}${path}\\?token=[A-Za-z0-9_-]+`).exec(mail.text)
  if (m === null) throw new Error(`no ${path} link in: ${mail.text}`)
  return m[0]
}

t.test('invite → e-mail → signup page → signed in, in a real browser', { skip, timeout: 120_000 }, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { SMTP_URL: smtp.url, PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })

  // The admin invites through the real API, over HTTP.
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme <Browsers>' })
  const email = 'newbie@example.com'
  const invite = await fetch(`${base}/api/users/invite`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: admin.cookie },
    body: JSON.stringify({ email, role: 'member' })
  })
  const inviteBody = await invite.text()
  assertContract(
    t, 'POST', '/api/users/invite',
    { statusCode: invite.status, headers: Object.fromEntries(invite.headers), body: inviteBody }
  )
  t.equal(invite.status, 200, inviteBody)
  const signupLink = linkIn(await smtp.nextMessage(0), base, '/signup')
  t.equal(JSON.parse(inviteBody).invitationUrl, signupLink, 'the e-mailed link is the invitationUrl')

  const browser = await launchChromium(t)
  const context = await browser.newContext()
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)

  await page.goto(signupLink)
  await page.locator('#accept').waitFor({ state: 'visible' })
  t.equal(await page.locator('#inv-email').textContent(), email, 'the preview shows the invited e-mail')
  t.equal(await page.locator('#inv-workspace').textContent(), 'Acme <Browsers>', 'and the workspace, as text')
  t.equal(await page.locator('#inv-role').textContent(), 'member')
  t.equal(await page.locator('#inv-by').textContent(), admin.email)
  await page.fill('#name', 'Newbie Person')
  await page.click('#accept-button')
  await page.waitForURL(`${base}/`)
  await t.resolves(
    page.locator('#me-email', { hasText: email }).waitFor({ state: 'visible' }),
    'the landing page shows the new user\'s e-mail'
  )
  t.equal(await page.locator('#me-name').textContent(), 'Newbie Person')
  t.match(await page.locator('#status').textContent(), `Signed in as ${email}`)

  const cookie = (await context.cookies()).find(c => c.name === SESSION_COOKIE)
  t.ok(cookie, 'the service_session cookie exists')
  t.equal(cookie?.httpOnly, true, 'HttpOnly')
  t.equal(cookie?.sameSite, 'Lax')
  t.notMatch(await page.evaluate<string>('document.cookie'), SESSION_COOKIE, 'invisible to page scripts')

  // Sign out, then back in with an e-mailed login link through /login.
  await page.click('#logout')
  await page.locator('#signed-out').waitFor({ state: 'visible' })
  t.notOk((await context.cookies()).some(c => c.name === SESSION_COOKIE), 'the cookie is gone after sign-out')
  await page.goto(`${base}/login`)
  await page.fill('#email', email)
  const seen = smtp.messages.length
  await page.click('#send-button')
  await page.locator('#status', { hasText: 'sign-in link' }).waitFor({ state: 'visible' })
  const loginLink = linkIn(await smtp.nextMessage(seen), base, '/login')
  await page.goto(loginLink)
  // The link names its account and signs in only on a click (login CSRF: test/security/).
  await page.locator('#signin-button', { hasText: `Sign in as ${email}` }).click()
  await page.waitForURL(`${base}/`)
  await t.resolves(
    page.locator('#me-email', { hasText: email }).waitFor({ state: 'visible' }),
    'signed in again through the login link'
  )

  // The used signup link now explains itself instead of offering the form.
  await page.goto(signupLink)
  await t.resolves(
    page.locator('#error', { hasText: 'already been used' }).waitFor({ state: 'visible' }),
    'a used invitation link says so'
  )

  // The API reference renders under its own CSP (handlers/meta.ts), not the API's default-src 'none'.
  await page.goto(`${base}/api/docs`)
  await t.resolves(
    page.getByText('Liveness and database check').first().waitFor({ state: 'visible' }),
    'the reference page lists the operations'
  )

  t.same(problems, [], 'no script errors and no CSP violations')
})
