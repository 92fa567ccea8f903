import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core'
import type { Test } from 'tap'

// Headless Chromium for the end-to-end tests: the Debian package (scripts/setup-browser.sh), driven
// by playwright-core. A test without it is skipped, saying how to get it.

// BROWSER_TESTS=off skips them too: .ci/run sets it for its first suite, so that each browser case
// runs once a CI run, in the second (PostgreSQL, Node 26, coverage). The browser and the pages are
// the same in both; what differs between the suites (the database, the Node version) is what the
// second runs them on. Run twice, they kept the CI over its 20 minutes.
const CHROMIUM = '/usr/bin/chromium'
export const skipWithoutChromium: string | false = process.env.BROWSER_TESTS === 'off'
  ? 'BROWSER_TESTS=off: browser tests run once a CI run, in its PostgreSQL suite'
  : existsSync(CHROMIUM)
    ? false
    : `${CHROMIUM} not found: run scripts/setup-browser.sh (installs the Debian chromium package) to run this test`

export async function launchChromium (t: { teardown(fn: () => unknown): void }): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'
    ]
  })
  t.teardown(async () => { await browser.close() })
  return browser
}

/**
 * Script errors and CSP violations on the page, collected: either would leave a page half-working.
 * Expected non-2xx answers (401 after sign-out, 410 for a used link, no favicon) are logged by
 * Chromium as "Failed to load resource"; anything else at error level is a problem.
 */
export function pageProblems (page: Page): string[] {
  const problems: string[] = []
  page.on('pageerror', err => problems.push(`pageerror: ${err.message}`))
  page.on('console', msg => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(`console: ${msg.text()}`)
  })
  return problems
}

/**
 * axe-core on the page as it is now: no serious or critical violation. With CONSOLE_SCREENSHOTS=<dir>
 * the page is also saved at 1280 and 360 px wide (full page), as console-<what>-<width>.png:
 * "API keys (admin, a key shown once)" → console-api-keys-admin-1280.png.
 */
export async function checkPage (
  t: Test, page: Page, what: string
): Promise<{ passes: number, minor: number }> {
  const { AxeBuilder } = await import('@axe-core/playwright')
  // axe.run in the page itself (legacy mode): the default runs each frame apart and merges their
  // results in a blank page it opens for each check, made for frames of other origins, which the
  // pages here cannot have (their CSP's default-src 'none' covers frames). The same results (both
  // compared on all 44 checks of the five files that make them), in half the time: about 1 s
  // against 2 a check.
  const result = await new AxeBuilder({ page }).setLegacyMode().analyze()
  const bad = result.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
  t.same(
    bad.map(v => `${v.id}: ${v.help} (${v.nodes.map(n => n.target.join(' ')).join('; ')})`), [],
    `axe: ${what} has no serious or critical violations`
  )
  const dir = process.env.CONSOLE_SCREENSHOTS
  if (dir !== undefined && dir !== '') {
    const slug = what.toLowerCase().replace(/\(([^,)]*)[^)]*\)/, '$1').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '')
    const size = page.viewportSize() ?? { width: 1280, height: 900 }
    for (const width of [1280, 360]) {
      await page.setViewportSize({ width, height: size.height })
      await page.screenshot({ path: join(dir, `console-${slug}-${width}.png`), fullPage: true, animations: 'disabled' })
    }
    await page.setViewportSize(size)
  }
  return { passes: result.passes.length, minor: result.violations.length }
}

/** The session cookie (`name=value`, as build(t)'s signIn gives it) set for `base` in a browser context. */
export async function withCookie (context: BrowserContext, base: string, cookie: string): Promise<void> {
  const [name, value] = cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }])
}

/** A new context signed in with `cookie`, its page (20 s waits) and the page's problems collected. */
export async function signedInPage (
  browser: Browser, base: string, cookie: string, viewport = { width: 1280, height: 900 }
): Promise<{ context: BrowserContext, page: Page, problems: string[] }> {
  const context = await browser.newContext({ viewport })
  await withCookie(context, base, cookie)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  return { context, page, problems: pageProblems(page) }
}

/** How many lines of the page an element's text takes (a long address wrapped: more than one). */
export async function textLines (element: Locator): Promise<number> {
  return await element.evaluate(el => {
    const range = el.ownerDocument.createRange()
    range.selectNodeContents(el)
    return new Set([...range.getClientRects()].map(r => Math.round(r.top))).size
  })
}
