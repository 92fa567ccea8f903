import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// Cross-site request forgery, in a real browser (headless Chromium). The service listens on
// http://127.0.0.1:<port> (its PUBLIC_URL) and an admin's browser holds its session cookie. A
// second loopback server plays the attacker on two other origins:
//  - http://127.0.0.1:<other port>: same-site (a site ignores the port), so SameSite=Lax still
//    sends the cookie with its form posts and fetches — as another port or a sibling subdomain
//    would;
//  - http://localhost:<other port>: cross-site, so the cookie stays home.
// The attacker's pages auto-submit forms and fetch() with credentials; every one must be refused
// 403 CSRF_REJECTED, change nothing and leave the browser signed in, while the service's own
// same-origin pages keep working.

/** Serves `pages[path]` as HTML. */
async function attackerServer (
  t: { teardown(fn: () => unknown): void },
  pages: Record<string, string>
): Promise<number> {
  const server: Server = createServer((req, res) => {
    const html = pages[(req.url ?? '/').split('?')[0] ?? '/']
    res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(html ?? 'not here')
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return (server.address() as AddressInfo).port
}

const autoSubmit = (action: string) => `<!doctype html><form id="f" method="post" action="${action}"></form>
<script>document.getElementById('f').submit()</script>`

const noCorsFetch = (url: string) => `<!doctype html><p id="done">sending</p><script>
fetch(${JSON.stringify(url)}, { method: 'POST', mode: 'no-cors', credentials: 'include' })
  .finally(() => { document.getElementById('done').textContent = 'sent' })
</script>`

t.test('forms and fetches from other origins act for nobody; the service\'s own pages still do', {
  skip, timeout: 120_000
}, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { SMTP_URL: smtp.url, PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })
  // What the service answered, as the server saw it (a page on another origin may not see it).
  const answered: string[] = []
  h.app.server.on('request', (req, res) => {
    const cookie = req.headers.cookie?.includes(SESSION_COOKIE) === true ? 'with' : 'without'
    res.on('finish', () => { answered.push(`${req.method ?? ''} ${req.url ?? ''} ${cookie} cookie: ${res.statusCode}`) })
  })

  const admin = await h.signIn({ role: 'admin' })
  const invite = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie },
    payload: { email: 'target@example.com', role: 'member' }
  })
  t.equal(invite.statusCode, 200, invite.body)
  const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  const invitationId = (list.json() as { items: Array<{ id: string }> }).items[0]?.id
  await smtp.nextMessage(0)
  const mailsBefore = smtp.messages.length

  const resend = `${base}/api/invitations/${invitationId}/resend`
  const attackerPort = await attackerServer(t, {
    '/form-resend': autoSubmit(resend),
    '/fetch-resend': noCorsFetch(resend),
    '/form-logout': autoSubmit(`${base}/api/auth/logout`)
  })
  const sameSite = `http://127.0.0.1:${attackerPort}`
  const crossSite = `http://localhost:${attackerPort}`

  const browser = await launchChromium(t)
  const context = await browser.newContext()
  await context.addCookies([{
    name: SESSION_COOKIE,
    value: admin.cookie.slice(SESSION_COOKIE.length + 1),
    url: base,
    httpOnly: true,
    sameSite: 'Lax'
  }])
  // A page per step: a navigation left pending by an attacker's page never interrupts the next.
  const fresh = async () => {
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    return page
  }
  const hasCookie = async () => (await context.cookies(base)).some(c => c.name === SESSION_COOKIE)
  const sessionLive = async () =>
    (await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })).statusCode === 200

  await t.test('a same-site form posts to a bodiless operation (resend): 403, no e-mail', async t => {
    const page = await fresh()
    const answer = page.waitForResponse(r => r.url() === resend)
    await page.goto(`${sameSite}/form-resend`, { waitUntil: 'commit' })
    const res = await answer
    t.equal((await res.request().allHeaders())['sec-fetch-site'], 'same-site', 'the browser says where the form came from')
    t.equal(res.status(), 403, await res.text())
    t.match(await res.json(), { code: 'CSRF_REJECTED' })
    t.equal(smtp.messages.length, mailsBefore, 'no invitation e-mail was re-sent')
  })

  await t.test('a same-site fetch (no-cors, credentials included): 403, no e-mail', async t => {
    // Chromium withholds the answer from the page (Cross-Origin-Resource-Policy), but the request
    // reaches the service: what it answered is read on the server's side.
    const seen = answered.length
    const page = await fresh()
    await page.goto(`${sameSite}/fetch-resend`)
    await page.locator('#done', { hasText: 'sent' }).waitFor()
    t.same(answered.slice(seen), [`POST /api/invitations/${invitationId}/resend with cookie: 403`],
      'the fetch carried the session cookie and was refused')
    t.equal(smtp.messages.length, mailsBefore, 'no invitation e-mail was re-sent')
  })

  await t.test('a cross-site form posts to logout: 403, the browser stays signed in', async t => {
    const page = await fresh()
    const answer = page.waitForResponse(r => r.url() === `${base}/api/auth/logout`)
    await page.goto(`${crossSite}/form-logout`, { waitUntil: 'commit' })
    const res = await answer
    t.equal((await res.request().allHeaders())['sec-fetch-site'], 'cross-site')
    t.equal(res.status(), 403)
    t.ok(await hasCookie(), 'the session cookie was not cleared')
    t.ok(await sessionLive(), 'and its session is live')
  })

  await t.test('the service\'s own page (same-origin fetch) signs out, and the session row is revoked', async t => {
    const page = await fresh()
    const problems = pageProblems(page)
    // The console's profile screen, with the way out (an admin lands on the overview at `/`).
    await page.goto(`${base}/console/profile`)
    await page.locator('#me-email').waitFor({ state: 'visible' })
    const answer = page.waitForResponse(r => r.url() === `${base}/api/auth/logout`)
    await page.click('#logout')
    const res = await answer
    t.equal((await res.request().allHeaders())['sec-fetch-site'], 'same-origin')
    t.equal(res.status(), 204)
    await page.locator('#signed-out').waitFor({ state: 'visible' })
    t.notOk(await hasCookie(), 'the cookie is gone')
    t.notOk(await sessionLive(), 'and so is the session: the old cookie value no longer authenticates')
    t.same(problems, [], 'no script errors and no CSP violations')
  })
})
