import t from 'tap'
import { build } from '../helpers/build.js'
import { closedPort } from '../helpers/smtp.js'
import { checkPage, launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// The API reference (/api/docs: Scalar's renderer under handlers/meta.ts's theme and options, and
// the page script page-scripts/api-docs.ts) in headless Chromium: axe-core finds no serious or
// critical violation, and its Test Request sends with the browser's own session (same origin:
// PUBLIC_URL is the page's origin, so the HttpOnly cookie goes with the request).

t.test('the API reference passes axe, and Test Request uses the browser\'s session', { skip }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { PUBLIC_URL: base } })
  const admin = await h.signIn()
  await h.app.listen({ port, host: '127.0.0.1' })
  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const [name, value] = admin.cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }])
  const page = await context.newPage()
  const problems = pageProblems(page)

  await page.goto(`${base}/api/docs`)
  await page.getByRole('heading', { name: 'Workspace Service API' }).waitFor({ state: 'visible' })
  await page.getByRole('button', { name: /Liveness and database check/ }).first().waitFor({ state: 'visible' })
  await checkPage(t, page, 'API reference')

  // GET /api/users/me through the reference's own client: the answer is this admin's.
  await page.goto(`${base}/api/docs#tag/user-management/GET/api/users/me`)
  const heading = page.getByRole('heading', { name: 'The signed-in user and their workspace' })
  await heading.waitFor({ state: 'visible' })
  const operation = page.locator('section, .section-container').filter({ has: heading }).last()
  await operation.getByRole('button', { name: /Test Request/ }).click()
  await page.getByRole('button', { name: /^Send get request to/ }).click()
  await t.resolves(page.getByText('200 OK').first().waitFor({ state: 'visible' }), 'the request is answered 200')
  await t.resolves(page.getByText(`"${admin.email}"`).first().waitFor({ state: 'visible' }), 'with the signed-in admin')
  t.same(problems, [], 'no script errors and no CSP violations')
})

// What a reader of the reference meets (issue 56, item 5): who may call each operation, said on its
// own page; no demo credential in the credential field; one "Webhooks" in the navigation (the tag
// of the endpoint operations shows as "Webhook endpoints"); the page's icon; no sideways scroll.
t.test('the API reference at 1280 and 360 px: who may call it, no demo credential, no sideways scroll', { skip }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const browser = await launchChromium(t)
  for (const width of [1280, 360]) {
    const context = await browser.newContext({ viewport: { width, height: 900 } })
    await context.route(url => !url.href.startsWith(base), route => route.abort())
    const page = await context.newPage()
    const problems = pageProblems(page)
    const missing: string[] = []
    page.on('response', r => { if (r.status() === 404) missing.push(r.url()) })
    await page.goto(`${base}/api/docs#tag/admin/GET/api/users/{userId}`)
    const heading = page.getByRole('heading', { name: 'A member of the workspace, by id' })
    await heading.waitFor({ state: 'visible' })
    const operation = page.locator('section, .section-container').filter({ has: heading }).last()
    await operation.locator('.who-may').waitFor()
    t.equal(await operation.locator('.who-may').textContent(),
      'Who may call it: an admin signed in (the session cookie); or an API key with members:read.', `${width} px: who may call it`)
    t.equal(await page.evaluate('document.documentElement.scrollWidth'), width, `${width} px: nothing scrolls sideways`)
    const icon = await page.locator('link[rel="icon"]').getAttribute('href')
    t.equal(icon, '/favicon.svg', 'the page names its icon (no /favicon.ico asked for)')
    t.equal((await fetch(`${base}${String(icon)}`)).status, 200)
    await checkPage(t, page, `API reference (an operation, ${width} px)`)
    if (width === 1280) {
      // The navigation's groups are buttons named "Open Group <name>".
      const groups = await page.locator('aside').first().getByRole('button', { name: /^Open Group/ })
        .evaluateAll(buttons => buttons.map(b => (b.textContent ?? '').replace(/^\s*Open Group\s*/, '').trim()))
      t.equal(groups.filter(g => g === 'Webhooks').length, 1, 'one "Webhooks" in the navigation: the events')
      t.equal(groups.filter(g => g === 'Webhook endpoints').length, 1, 'and the endpoints\' operations by their own name')
      await operation.getByRole('button', { name: /Test Request/ }).click()
      const field = page.getByRole('dialog').locator('input[placeholder]').first()
      await field.waitFor()
      // A string, evaluated in the page (the test's own TypeScript knows no DOM).
      await t.resolves(page.waitForFunction(`!document.querySelector('[placeholder="QUxMIFlPVVIgQkFTRSBBUkUgQkVMT05HIFRPIFVT"]') &&
        document.querySelector('[role="dialog"] input[placeholder]')?.getAttribute('placeholder') ===
          'none needed: your browser sends its own session cookie'`),
      'Test Request: the cookie field says none is needed, no demo credential')
      const inDialog = page.getByRole('dialog').locator('.who-may')
      await inDialog.waitFor()
      t.equal(await inDialog.textContent(), 'Who may call it: an admin signed in (the session cookie); or an API key with members:read.',
        'Test Request: who may call it, for this operation')
      t.equal(await page.getByRole('dialog').getByRole('checkbox', { name: 'Send userId' }).count(), 1, 'each row\'s switch named after its row')
      await checkPage(t, page, 'API reference (Test Request)')
    }
    t.same(missing, [], `${width} px: nothing the page asks for is missing`)
    t.same(problems, [], 'no script errors and no CSP violations')
    await context.close()
  }
})

// A response of several media types (the audit export's NDJSON and CSV; the SSO start's JSON and
// HTML pages): the renderer names no copy button and draws the media-type menu inside the
// response's disclosure button. page-scripts/api-docs.ts names the one and moves the other out:
// axe-clean, and the menu still switches.
t.test('responses of several media types: axe-clean, the media-type menu still switches', { skip }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.route(url => !url.href.startsWith(base), route => route.abort())
  const page = await context.newPage()
  const problems = pageProblems(page)
  await page.goto(`${base}/api/docs#tag/admin/GET/api/audit-events/export`)
  const heading = page.getByRole('heading', { name: 'The audit trail as a file (NDJSON or CSV), oldest first' })
  await heading.waitFor({ state: 'visible' })
  const operation = page.locator('section, .section-container').filter({ has: heading }).last()
  const menu = operation.locator('li.parameter-item > button:not(.parameter-item-trigger)').first()
  t.match(await menu.textContent(), /application\/x-ndjson/, 'the menu, outside the disclosure button')
  await menu.click()
  await page.getByRole('option', { name: /text\/csv/ }).first().click()
  await page.waitForFunction(el => /text\/csv/.test(el?.textContent ?? ''), await menu.elementHandle())
  t.pass('it switches to text/csv')
  await checkPage(t, page, 'API reference (the audit export)')
  await page.goto(`${base}/api/docs#tag/sso/GET/api/oauth/sso`)
  await page.getByRole('heading', { name: /^Start a sign-in through the single sign-on connection/ }).first()
    .waitFor({ state: 'visible' })
  await checkPage(t, page, 'API reference (the SSO start: JSON and HTML)')
  t.same(problems, [], 'no script errors and no CSP violations')
})
