import t from 'tap'
import { readFileSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort } from '../helpers/smtp.js'
import { checkPage, launchChromium, signedInPage, skipWithoutChromium as skip } from '../helpers/browser.js'

// The Look card of the Settings screen (issue 54, item 4) in headless Chromium under the page's
// CSP: an accent colour of #ffff00 refused beside its field with the contrast it reached; a
// display name, a colour and a sender name saved; a logo that is an SVG, an HTML file named .png
// or 5 MB refused in words beside the file input; a PNG uploaded, previewed, shown in the
// console's header (alt: the display name), then removed. axe-core at 1280 and 360 px; the
// screen's first load within the 25 kB budget (an empty cache). Screenshots with CONSOLE_SCREENSHOTS.

const png = readFileSync(new URL('../fixtures/branding/logo.png', import.meta.url))

/** With CONSOLE_SCREENSHOTS: the Look card as it is, at 360 px, as console-look-<what>-360.png. */
async function lookShot (page: Page, what: string) {
  const dir = process.env.CONSOLE_SCREENSHOTS
  if (dir === undefined || dir === '') return
  const size = page.viewportSize() ?? { width: 1280, height: 900 }
  await page.setViewportSize({ width: 360, height: size.height })
  await page.locator('section[aria-labelledby=look-title]').screenshot({ path: `${dir}/console-look-${what}-360.png` })
  await page.setViewportSize(size)
}

async function choose (page: Page, name: string, mimeType: string, buffer: Buffer) {
  await page.locator('#look-logo').setInputFiles({ name, mimeType, buffer })
}

t.test('Settings → Look: refusals in words, the look saved, a logo uploaded and removed, within the budget', { skip, timeout: 240_000 }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, { env: { PUBLIC_URL: base } })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics' })
  const browser = await launchChromium(t)
  const { page, problems } = await signedInPage(browser, base, admin.cookie)
  await page.goto(`${base}/console/settings`)
  await page.getByRole('heading', { level: 2, name: 'Look' }).waitFor()
  // The first load, as bench/console.ts counts it: every script, chunk and stylesheet, on the wire.
  const files = await page.evaluate(() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/static/'))
    .map(e => ({ name: e.name.replace(/^.*\/static\//, ''), bytes: (e as unknown as { transferSize: number }).transferSize })))
  const bytes = files.reduce((n, f) => n + f.bytes, 0)
  t.comment(`Settings first load: ${bytes} B in ${files.length} files (${files.map(f => `${f.name} ${f.bytes} B`).join(', ')})`)
  t.ok(files.length >= 2 && bytes <= 25 * 1024, `the Settings screen's first load, ${bytes} B on the wire, is within 25 kB`)
  await checkPage(t, page, 'Settings (admin, the Look card empty)')

  // #ffff00: refused beside the field, the ratio said; the field marked invalid and focused.
  await page.getByLabel('Accent colour').fill('#ffff00')
  await page.getByRole('button', { name: 'Save the look' }).click()
  const accentError = page.locator('#look-accent-error')
  await accentError.waitFor()
  t.equal(await accentError.textContent(),
    '#ffff00 reaches only 1.07:1 against white: white button text and links in it need at least 4.5:1. Choose a darker colour.')
  t.equal(await page.getByLabel('Accent colour').getAttribute('aria-invalid'), 'true')
  t.equal(await page.evaluate<string | undefined>('document.activeElement?.id'), 'look-accent')
  await checkPage(t, page, 'Settings (admin, an accent colour refused)')
  await lookShot(page, 'accent-refused')

  await page.getByLabel('Display name').fill('Acme')
  await page.getByLabel('Accent colour').fill('#1d4ed8')
  await page.getByLabel('Sender name').fill('Acme People')
  await page.getByRole('button', { name: 'Save the look' }).click()
  await page.locator('#live', { hasText: 'The look was saved' }).waitFor()
  t.equal(await accentError.count(), 0, 'the refusal is gone')
  t.same((await h.inject({ url: '/api/workspace/branding', headers: { cookie: admin.cookie } })).json(),
    { displayName: 'Acme', accentColor: '#1d4ed8', senderName: 'Acme People', logo: null })

  // Logos refused in words beside the file input.
  const logoError = page.locator('#look-logo-error')
  await choose(page, 'logo.svg', 'image/svg+xml', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))
  await page.locator('#look-logo-error', { hasText: 'SVG' }).waitFor()
  t.equal(await logoError.textContent(), 'This is an SVG image; upload a PNG, JPEG or WebP.')
  await choose(page, 'logo.png', 'image/png', Buffer.from('<!doctype html><title>not a logo</title>'))
  await page.locator('#look-logo-error', { hasText: 'not a PNG' }).waitFor()
  t.equal(await logoError.textContent(), 'This file is not a PNG, JPEG or WebP image.')
  await choose(page, 'photo.png', 'image/png', Buffer.concat([png, Buffer.alloc(5_000_000)]))
  await page.locator('#look-logo-error', { hasText: '200 kB' }).waitFor()
  t.equal(await logoError.textContent(), 'photo.png is 5.0 MB: a logo may be at most 200 kB. Export it smaller.')
  t.equal(await page.locator('#look-logo').getAttribute('aria-invalid'), 'true')
  await checkPage(t, page, 'Settings (admin, a logo refused)')
  await lookShot(page, 'logo-refused')

  // A PNG: previewed, and the console's header shows it with the display name as its text.
  await choose(page, 'logo.png', 'image/png', png)
  await page.locator('#look-logo-preview').waitFor()
  t.equal(await logoError.count(), 0)
  const header = page.locator('#brand-logo')
  await header.waitFor()
  t.equal(await header.getAttribute('alt'), 'Acme')
  t.ok(await header.evaluate(img => (img as unknown as { naturalWidth: number }).naturalWidth > 0),
    'the logo loads under the page\'s CSP')
  await page.setViewportSize({ width: 360, height: 800 })
  await checkPage(t, page, 'Settings (admin, a logo, 360 px)')
  await page.setViewportSize({ width: 1280, height: 900 })
  await lookShot(page, 'logo')

  await page.getByRole('button', { name: 'Remove the logo' }).click()
  await page.locator('#look-no-logo').waitFor()
  await page.locator('header .brand', { hasText: 'Acme Robotics' }).waitFor()
  t.equal(await header.count(), 0, 'the header shows the name again')
  t.same(problems, [], 'no script error or CSP violation')
})
