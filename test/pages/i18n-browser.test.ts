import { createHash } from 'node:crypto'
import { join } from 'node:path'
import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'
import { hashToken } from '../../src/lib/tokens.js'
import { translate } from '../../src/i18n/messages.js'

// Issue 54 in Chromium: /login in Arabic and Japanese has no axe violation at all, at 360 and 1280
// px; Arabic lays out right to left; the page's script speaks the page's language (the words come
// with the page); an invitation made in Japanese opens in Japanese in a German browser, in its
// workspace's look (logo, name, accent colour) under the real CSP. With PAGE_SCREENSHOTS=<dir>,
// /login in de, ja and ar and the branded signup page are saved at 360 px wide.

const WIDTHS = [360, 1280] as const

async function axeViolations (page: Page): Promise<string[]> {
  const { AxeBuilder } = await import('@axe-core/playwright')
  const result = await new AxeBuilder({ page }).setLegacyMode().analyze()
  return result.violations.map(v => `${v.impact ?? ''} ${v.id}: ${v.help} (${v.nodes.map(n => n.target.join(' ')).join('; ')})`)
}

async function screenshot (page: Page, name: string): Promise<void> {
  const dir = process.env.PAGE_SCREENSHOTS
  if (dir === undefined || dir === '') return
  await page.setViewportSize({ width: 360, height: 800 })
  await page.screenshot({ path: join(dir, `${name}-360.png`), fullPage: true, animations: 'disabled' })
}

/** A small PNG for the logo: a square drawn by Chromium itself. */
async function logoPng (browser: Browser): Promise<Buffer> {
  const page = await browser.newPage({ viewport: { width: 96, height: 48 } })
  await page.setContent('<body style="margin:0;background:#7a1f5c"></body>')
  const png = await page.screenshot({ type: 'png' })
  await page.close()
  return png
}

t.test('pages in the reader\'s language, in Chromium', { skip, timeout: 240_000 }, async t => {
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { SMTP_URL: smtp.url, PUBLIC_URL: base, AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', email: 'ada@acme.test', workspaceName: 'Acme Robotics' })
  const browser = await launchChromium(t)

  for (const locale of ['ar', 'ja'] as const) {
    await t.test(`/login in ${locale}: axe-clean at 360 and 1280 px, its script in ${locale}`, async t => {
      const context = await browser.newContext({ locale, viewport: { width: 1280, height: 900 } })
      t.teardown(async () => { await context.close() })
      const page = await context.newPage()
      page.setDefaultTimeout(20_000)
      const problems = pageProblems(page)
      await page.goto(`${base}/login`)
      t.equal(await page.getAttribute('html', 'lang'), locale)
      t.equal(await page.getAttribute('html', 'dir'), locale === 'ar' ? 'rtl' : 'ltr')
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 })
        t.same(await axeViolations(page), [], `${locale} at ${width} px: no axe violation`)
      }
      if (locale === 'ar') {
        // Right to left: the heading starts at the right edge of the column.
        const box = await page.locator('#continue-button').boundingBox()
        const body = await page.locator('body').boundingBox()
        t.ok(box !== null && body !== null && Math.abs((box.x + box.width) - (body.x + body.width - 16)) < 2,
          'the button sits at the right, where an Arabic line starts')
      }
      await page.fill('#email', 'nobody@acme.test')
      await page.click('#continue-button')
      await page.locator('#status', { hasText: translate(locale, 'pages.login.linkSent') }).waitFor({ state: 'visible' })
      t.pass('the script\'s answer in the page\'s words')
      // An error answer: its code in the page's words, not the API's English message.
      await page.goto(`${base}/login?token=not-a-link`)
      await page.locator('#error', { hasText: translate(locale, 'pages.error.TOKEN_INVALID') }).waitFor({ state: 'visible' })
      t.pass('an error by its code, in the page\'s words')
      t.same(problems, [], 'no script error, no CSP violation')
    })
  }

  await t.test('an invitation made in Japanese, opened in a German browser, in the workspace\'s look', async t => {
    const png = await logoPng(browser)
    await h.db.query(
      `INSERT INTO workspace_branding (workspace_id, display_name, accent_color, logo, logo_sha256, logo_media_type, updated_at)
       VALUES ($1, 'Acme', '#7a1f5c', $2, $3, 'image/png', now())`,
      [admin.workspaceId, png, createHash('sha256').update(png).digest('hex')])
    const now = h.clock.now()
    await h.db.query(
      `INSERT INTO invitations (workspace_id, email, role, token_hash, expires_at, created_at, updated_at, locale)
       VALUES ($1, 'kenji@acme.test', 'member', $2, $3, $4, $4, 'ja')`,
      [admin.workspaceId, hashToken('invitation-ja'), new Date(now.getTime() + 7 * 86_400_000), now])
    const context = await browser.newContext({ locale: 'de-CH', viewport: { width: 1280, height: 900 } })
    t.teardown(async () => { await context.close() })
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    const problems = pageProblems(page)
    await page.goto(`${base}/signup?token=invitation-ja`)
    await page.locator('#accept').waitFor({ state: 'visible' })
    t.equal(await page.getAttribute('html', 'lang'), 'ja', 'the invitation\'s language, not the browser\'s')
    t.equal(await page.locator('#inv-role').textContent(), 'メンバー')
    t.equal(await page.locator('#accept-button').textContent(), '承諾して kenji@acme.test としてサインイン')
    t.match(await page.locator('#inv-expires').textContent(), /\d{4}年\d{1,2}月\d{1,2}日/, 'the date as Japanese writes it')
    t.ok(await page.locator('.brand img').evaluate(img => (img as unknown as { naturalWidth: number }).naturalWidth > 0), 'the logo loads')
    t.equal(await page.locator('.brand img').getAttribute('alt'), 'Acme のロゴ')
    // The page's own window (the test's TypeScript has no DOM types).
    type Styled = { getComputedStyle: (el: unknown) => { backgroundColor: string } }
    const background = await page.locator('#accept-button')
      .evaluate(b => (globalThis as unknown as Styled).getComputedStyle(b).backgroundColor)
    t.equal(background, 'rgb(122, 31, 92)', 'the button in the accent colour')
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 })
      t.same(await axeViolations(page), [], `at ${width} px: no axe violation`)
    }
    await screenshot(page, 'signup-ja-branded')
    t.same(problems, [], 'no script error, no CSP violation')
  })

  await t.test('a workspace named with a placeholder\'s braces: the join page writes the name as it is', async t => {
    // The page's script fills its words' placeholders ({email}); the workspace's name is formatted
    // on the server into the same words, so a name holding `{email}` must stay text.
    const curly = await h.signIn({ role: 'admin', email: 'cy@curly.test', workspaceName: 'Curly {email} Co' })
    const link = await h.inject({ method: 'POST', url: '/api/invite-links', payload: {}, headers: { cookie: curly.cookie } })
    t.equal(link.statusCode, 201)
    const code = new URL((link.json() as { url: string }).url).pathname.split('/').pop() as string
    const seen = smtp.messages.length
    t.equal((await h.inject({ method: 'POST', url: `/api/join/${code}`, payload: { email: 'new@elsewhere.test' } })).statusCode, 202)
    const confirmUrl = /(http\S+\?confirm=[A-Za-z0-9_-]+)/.exec((await smtp.nextMessage(seen)).text)?.[1] ?? ''
    const context = await browser.newContext({ locale: 'en' })
    t.teardown(async () => { await context.close() })
    const page = await context.newPage()
    page.setDefaultTimeout(20_000)
    await page.goto(confirmUrl)
    await page.locator('#confirm').waitFor({ state: 'visible' })
    t.equal(await page.locator('#confirm-text').textContent(),
      'This link confirms new@elsewhere.test and signs you in to Curly {email} Co, joining it.')
    t.equal(await page.locator('#confirm-email').count(), 1, 'the address is one element, where the sentence puts it')
  })

  await t.test('screenshots of /login in de, ja and ar (PAGE_SCREENSHOTS)', async t => {
    for (const locale of ['de', 'ja', 'ar']) {
      const context = await browser.newContext({ locale })
      const page = await context.newPage()
      await page.goto(`${base}/login`)
      t.equal(await page.getAttribute('html', 'lang'), locale)
      await screenshot(page, `login-${locale}`)
      await context.close()
    }
  })
})
