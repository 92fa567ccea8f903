import t, { type Test } from 'tap'
import type { Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { checkPage, launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// Invite links in headless Chromium, through the real pages under their CSP: the console's
// Invite links screen (create, the link shown once, list, new code, revoke) and the /join page a
// person opens (ask, the e-mailed confirmation, a click to join), each checked by axe-core.

async function axe (t: Test, page: Page, what: string): Promise<void> { await checkPage(t, page, what) }

t.test('invite links in a browser: the console screen, then joining through /join', { skip, timeout: 240_000 }, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { SMTP_URL: smtp.url, PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })

  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  const [name, value] = admin.cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }])
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)
  let url = ''

  await t.test('the console: create, the link shown once with a copy button, listed, new code, revoke', async t => {
    await page.goto(`${base}/`)
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Invite links', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: 'Invite links' }).waitFor()
    t.equal(await page.title(), 'Invite links · Acme Robotics')
    await axe(t, page, 'Invite links (empty)')
    await page.fill('#link-uses', '2')
    await page.selectOption('#link-expiry', '24')
    await page.getByRole('button', { name: 'Create the link' }).click()
    url = await page.locator('#secret-value').inputValue()
    t.match(url, new RegExp(`^${base}/join/[A-Za-z0-9_-]{32}$`), 'the whole link, once')
    await page.getByRole('button', { name: 'Copy' }).click()
    t.equal(await page.evaluate('navigator.clipboard.readText()'), url, 'copied')
    await axe(t, page, 'Invite links (a link shown once)')
    await page.getByRole('button', { name: 'I have copied it' }).click()
    const row = page.getByRole('row', { name: /0 of 2/ })
    await row.waitFor()
    t.match(await row.textContent(), /active/)
    t.notOk((await page.content()).includes(url), 'the page no longer holds the link')

    // A second link: a new code for it, then revoked.
    await page.getByRole('button', { name: 'Create the link' }).click()
    const other = await page.locator('#secret-value').inputValue()
    await page.getByRole('button', { name: 'I have copied it' }).click()
    const unlimited = page.getByRole('row', { name: /0 of unlimited/ })
    await unlimited.getByRole('button', { name: 'New code' }).click()
    await unlimited.getByRole('button', { name: 'Yes, replace the code' }).click()
    const replaced = await page.locator('#secret-value').inputValue()
    t.not(replaced, other, 'a new link')
    t.equal((await h.inject({ url: new URL(other).pathname })).statusCode, 404, 'the old one is dead')
    await page.getByRole('button', { name: 'I have copied it' }).click()
    await unlimited.getByRole('button', { name: 'Revoke' }).click()
    await unlimited.getByRole('button', { name: 'Yes, revoke the link' }).click()
    await page.getByRole('row', { name: /revoked/ }).waitFor()
    await axe(t, page, 'Invite links (listed, one revoked)')
  })

  await t.test('/join: names the workspace, e-mails a confirmation; the click joins and signs in', async t => {
    const visitor = await browser.newContext({ viewport: { width: 360, height: 740 } })
    const p = await visitor.newPage()
    const visitorProblems = pageProblems(p)
    await p.goto(url)
    await p.getByRole('heading', { level: 1, name: 'Join Acme Robotics' }).waitFor()
    t.notOk((await p.content()).includes('ada@example.com'), 'nothing about the workspace but its name')
    await axe(t, p, '/join (the form, 360 px)')
    const seen = smtp.messages.length
    await p.fill('#email', 'grace@example.org')
    await p.fill('#name', 'Grace Hopper')
    await p.getByRole('button', { name: 'E-mail me a link to join' }).click()
    await p.getByText('A confirmation link is on its way').waitFor()
    const mail = await smtp.nextMessage(seen)
    const confirmUrl = /(http\S+\?confirm=[A-Za-z0-9_-]+)/.exec(mail.text)?.[1] ?? ''
    t.ok(confirmUrl.startsWith(url), 'the confirmation is a link to the same page')

    await p.goto(confirmUrl)
    const button = p.getByRole('button', { name: 'Join as grace@example.org' })
    await button.waitFor()
    t.equal((await h.db.query("SELECT 1 FROM users WHERE email = 'grace@example.org'")).rows.length, 0, 'opened: nothing yet')
    await axe(t, p, '/join (the confirm step)')
    await button.click()
    await p.waitForURL(`${base}/`)
    await p.getByText('grace@example.org').first().waitFor()
    t.equal((await h.db.query("SELECT role FROM users WHERE email = 'grace@example.org'")).rows.length, 1, 'joined')

    await p.goto(`${base}/join/not-a-code`)
    await p.getByRole('heading', { level: 1, name: 'This invite link is not valid' }).waitFor()
    await axe(t, p, '/join (an invalid link)')
    t.same(visitorProblems, [], 'no script error or CSP violation on /join')
    await visitor.close()
  })

  t.same(problems, [], 'no script error or CSP violation in the console')
})
