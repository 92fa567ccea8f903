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
