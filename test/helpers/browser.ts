import { existsSync } from 'node:fs'
import type { Browser, Page } from 'playwright-core'

// Headless Chromium for the end-to-end tests: the Debian package (scripts/setup-browser.sh), driven
// by playwright-core. A test without it is skipped, saying how to get it.

const CHROMIUM = '/usr/bin/chromium'
export const skipWithoutChromium: string | false = existsSync(CHROMIUM)
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
