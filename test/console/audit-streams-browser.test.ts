import t from 'tap'
import type { Test } from 'tap'
import type { Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { checkPage, launchChromium, signedInPage, skipWithoutChromium as skip } from '../helpers/browser.js'
import { until } from '../helpers/service-process.js'
import { startReceiver } from '../audit/streams-peers.js'

// The Activity screen's Streams panel (issue 55, item 5) in headless Chromium through the real
// page under its CSP: add a Splunk stream through the form, send it a test record (the loopback
// receiver gets it), pause and resume it, its last delivery and lag shown; axe at 1280 and 360 px
// with no violation inside the panel and no side scroll; the screen's first load within 25 kB.
// CONSOLE_SCREENSHOTS=<dir> saves the panel at both widths.

const h = await build(t, { env: { JOBS_POLL_MS: '500', WEBHOOK_RETRY_DELAYS_MS: '200' } })
const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })
const splunk = await startReceiver(t, 'splunk', 'hec-browser-token')

async function axeBoth (t: Test, page: Page, what: string): Promise<void> {
  const { AxeBuilder } = await import('@axe-core/playwright')
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 })
    await checkPage(t, page, `${what}, ${width}`)
    const panel = await new AxeBuilder({ page }).setLegacyMode().include('#streams').analyze()
    t.same(panel.violations.map(v => v.id), [], `axe: the Streams panel at ${width} px, no violation of any impact`)
    t.equal(await page.evaluate<number>('document.documentElement.scrollWidth'), width, `${what}: no side scroll at ${width} px`)
    const dir = process.env.CONSOLE_SCREENSHOTS
    if (dir !== undefined && dir !== '') {
      await page.locator('#streams').screenshot({ path: `${dir}/audit-streams-${what.replace(/\W+/g, '-')}-${width}.png` })
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

t.test('Streams on the Activity screen', { skip, timeout: 300_000 }, async t => {
  const port = (await h.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()
  const base = `http://127.0.0.1:${String(port)}`
  const browser = await launchChromium(t)
  const { context, page, problems } = await signedInPage(browser, base, admin.cookie)
  await page.goto(`${base}/console/activity`)
  const panel = page.getByRole('region', { name: 'Streams' })
  await panel.waitFor()
  await page.waitForLoadState('networkidle')
  const files = await page.evaluate(() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/static/')).map(e => (e as unknown as { transferSize: number }).transferSize))
  const bytes = files.reduce((n, b) => n + b, 0)
  t.comment(`Activity's first load with the Streams panel: ${bytes} B in ${files.length} files`)
  t.ok(bytes <= 25 * 1024, `${bytes} B ≤ 25 kB`)
  t.match(await panel.textContent(), /No streams/)
  await axeBoth(t, page, 'no stream')

  await page.getByLabel('Receiver').selectOption('splunk')
  await page.getByLabel('Name').fill('Splunk EU')
  await page.getByLabel('URL', { exact: true }).fill(splunk.url)
  await page.getByLabel('HEC token').fill('hec-browser-token')
  await page.getByRole('button', { name: 'Add the stream' }).click()
  const card = panel.getByRole('listitem').filter({ hasText: 'Splunk EU' })
  await card.waitFor()
  t.match(await card.textContent(), /active/)
  t.notOk((await page.content()).includes('hec-browser-token'), 'the token is not on the page once added')

  await page.getByRole('button', { name: 'Send a test record to Splunk EU' }).click()
  await until('the test record at the receiver', () =>
    splunk.requests.some(r => r.events.some(e => e.type === 'com.workspace-service.audit.test')) || undefined, 30_000)
  await until('its audit_stream.created delivered', () => splunk.accepted().some(e => e.data.action === 'audit_stream.created') || undefined, 30_000)
  await page.getByRole('button', { name: 'Refresh' }).click()
  await card.getByText(/Lag/).waitFor()
  await axeBoth(t, page, 'one stream')

  await page.getByRole('button', { name: 'Pause Splunk EU' }).click()
  await card.getByText('paused', { exact: true }).waitFor()
  await axeBoth(t, page, 'paused')
  await page.getByRole('button', { name: 'Resume Splunk EU' }).click()
  await card.getByText('active', { exact: true }).waitFor()
  const actions = (await h.db.query<{ action: string }>(
    "SELECT action FROM audit_events WHERE action LIKE 'audit_stream.%' ORDER BY chain_seq")).rows.map(r => r.action)
  t.same(actions, ['audit_stream.created', 'audit_stream.tested', 'audit_stream.paused', 'audit_stream.resumed'])
  t.same(problems, [], 'no error in the page')
  await context.close()
})
