import t from 'tap'
import { readFile } from 'node:fs/promises'
import type { Browser, Page, Route } from 'playwright-core'
import type { Test } from 'tap'
import { build } from '../helpers/build.js'
import { checkPage, launchChromium, pageProblems, signedInPage, skipWithoutChromium as skip, withCookie } from '../helpers/browser.js'
import { insertAuditRows, type AuditRow } from '../helpers/audit-rows.js'
import { uuidV7Source } from '../../src/lib/uuid.js'

// Activity's Export (issue 55, item 5) in headless Chromium through the real page under its CSP:
// a few thousand records exported as NDJSON and CSV through the form, each saved file read from
// Playwright's download and compared, byte for byte, with what the API exports for the same query;
// the list's filters narrow it; the dates are the admin's local days (a context in Auckland); a
// transfer cut mid-line (page.route fulfils the first request with a truncated body: the service
// has no test route) resumes with `after` = the last complete line's id and saves the whole file;
// cuts that keep coming stop after the bounded retries with what arrived saveable; Cancel; a member
// has no Export, a demoted admin reads the 403 in words, a bad range is refused beside its field.
// The screen's first load stays within 25 kB on the wire; axe at 1280 and 360 px with 0 violations,
// idle and in progress. CONSOLE_SCREENSHOTS=<dir> saves each checked state at both widths.

const EXPORT = '/api/audit-events/export'
const DAY = 86_400_000

const h = await build(t)
const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@example.com' })
const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'grace@example.com' })
const other = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId, email: 'bea@example.com' })

// 3,000 records over the last 20 days (inside the default range), 201 from 60 days ago (outside
// it): every tenth a workspace change through the web door, the others invitations by the system.
const newId = uuidV7Source()
const rows: AuditRow[] = []
const seed = (at: Date, i: number) => {
  const settings = i % 10 === 0
  rows.push({
    id: newId(at),
    workspaceId: admin.workspaceId,
    action: settings ? 'workspace.settings_changed' : 'invitation.created',
    actorType: settings ? 'user' : 'system',
    actorId: settings ? admin.userId : null,
    actorLabel: settings ? 'ada@example.com' : null,
    targetType: settings ? 'workspace' : 'invitation',
    targetId: settings ? admin.workspaceId : `inv-${i}`,
    payload: settings ? { name: `=Acme ${i}` } : { email: `p${i}@example.com`, role: 'member' },
    createdAt: at,
    source: settings ? 'web' : 'system'
  })
}
const old = Date.now() - 60 * DAY
for (let i = 0; i < 200; i++) seed(new Date(old + i * 1000), i)
// And one whose actor's label holds a line break: a CSV record over two lines, counted as one.
rows.push({
  id: newId(new Date(old + 500_000)),
  workspaceId: admin.workspaceId,
  action: 'invitation.created',
  actorType: 'api_key',
  actorId: null,
  actorLabel: 'HR\nimport',
  targetType: 'invitation',
  targetId: 'inv-hr',
  payload: {},
  createdAt: new Date(old + 500_000),
  source: 'api'
})
const SEEDED = 3201
const recent = Date.now() - 20 * DAY
for (let i = 0; i < 3000; i++) seed(new Date(recent + i * 500_000), i)
await insertAuditRows(h.db, rows)

/** What the API exports for `query` (as the page would ask: the same parameters), as an admin. */
async function apiExport (query: URLSearchParams, accept = 'application/x-ndjson'): Promise<string> {
  const res = await h.inject({ url: `${EXPORT}?${query.toString()}`, headers: { cookie: admin.cookie, accept } })
  t.equal(res.statusCode, 200, `the API's export of ?${query.toString()}`)
  return res.body
}

const linesOf = (text: string) => text.split(/\r?\n/).slice(0, -1)
const idsOf = (text: string, csv: boolean) => linesOf(text).slice(csv ? 1 : 0)
  .map(l => csv ? l.slice(1, 37) : (JSON.parse(l) as { id: string }).id)

/** Click Download and read the file the page saves; its name too. */
async function download (page: Page, button = page.getByRole('button', { name: 'Download', exact: true })) {
  const saved = page.waitForEvent('download')
  await button.click()
  const file = await saved
  return { name: file.suggestedFilename(), text: await readFile(await file.path(), 'utf8') }
}

/** The query of the last export request the page made (its `after` left out). */
function asked (page: Page): () => URLSearchParams {
  let last = new URLSearchParams()
  page.on('request', r => {
    if (new URL(r.url()).pathname !== EXPORT) return
    const q = new URL(r.url()).searchParams
    q.delete('after')
    last = q
  })
  return () => last
}

/**
 * axe at 1280 and 360 px: no violation of any impact (checkPage fails on serious and critical
 * ones and saves the screenshots), but the one every screen of the console has today — the shell's
 * "Live: …" line (#live-state, hooks/live.tsx) outside a landmark, `region`, moderate — and none
 * at all inside the Export form.
 */
async function axeBoth (t: Test, page: Page, what: string) {
  const { AxeBuilder } = await import('@axe-core/playwright')
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 })
    await checkPage(t, page, `${what}, ${width}`)
    const found = (await new AxeBuilder({ page }).setLegacyMode().analyze()).violations
      .flatMap(v => v.nodes.map(n => `${v.id} ${n.target.join(' ')}`))
    t.same(found.filter(v => v !== 'region #live-state'), [], `axe: ${what} at ${width} px, no other violation of any impact`)
    const form = await new AxeBuilder({ page }).setLegacyMode().include('#export-form').analyze()
    t.same(form.violations.map(v => v.id), [], `axe: the Export form at ${width} px, no violation`)
    t.equal(await page.evaluate<number>('document.documentElement.scrollWidth'), width, `${what}: no side scroll at ${width} px`)
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

/** Screenshots as the screen is now, at 1280 and 360 px, with CONSOLE_SCREENSHOTS=<dir>: the page, the form alone. */
async function shoot (page: Page, name: string) {
  const dir = process.env.CONSOLE_SCREENSHOTS
  if (dir === undefined || dir === '') return
  for (const width of [1280, 360]) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: `${dir}/activity-export-${name}-${width}.png`, fullPage: true, animations: 'disabled' })
    // The form alone too: the full page at 360 px is the list, 6,000 px of it.
    await page.locator('#export-form').screenshot({ path: `${dir}/activity-export-${name}-form-${width}.png`, animations: 'disabled' })
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

/** A browser context signed in with `cookie` (in `timezoneId`, if given) on the Activity screen. */
async function openActivity (browser: Browser, base: string, cookie = admin.cookie, timezoneId?: string) {
  const zone = timezoneId === undefined ? {} : { timezoneId }
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...zone })
  await withCookie(context, base, cookie)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)
  await page.goto(`${base}/console/activity`)
  await page.getByRole('heading', { level: 1, name: 'Activity' }).waitFor()
  return { context, page, problems }
}

/** The focused element's text (the button that has the focus). */
const focused = async (page: Page) => await page.evaluate<string | undefined>('document.activeElement?.textContent')

t.test('Export on the Activity screen', { skip, timeout: 300_000 }, async t => {
  const port = (await h.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()
  const base = `http://127.0.0.1:${String(port)}`
  const browser = await launchChromium(t)

  await t.test('the first load stays within 25 kB on the wire', async t => {
    const { context, page } = await openActivity(browser, base)
    await page.getByRole('form', { name: 'Export' }).waitFor()
    await page.waitForLoadState('networkidle')
    const files = await page.evaluate(() => performance.getEntriesByType('resource')
      .filter(e => e.name.includes('/static/')).map(e => (e as unknown as { transferSize: number }).transferSize))
    const bytes = files.reduce((n, b) => n + b, 0)
    t.comment(`Activity's first load: ${bytes} B in ${files.length} files`)
    t.ok(files.length >= 2 && bytes <= 25 * 1024, `${bytes} B ≤ 25 kB`)
    await context.close()
  })

  await t.test('everything as NDJSON: the file is the API\'s export, counted as it arrived', async t => {
    const { context, page, problems } = await openActivity(browser, base)
    const form = page.getByRole('form', { name: 'Export' })
    t.match(await form.textContent(), /No filter of the list is set/, 'it says which filters apply')
    t.equal(await page.getByRole('radio', { name: 'NDJSON' }).isChecked(), true, 'NDJSON by default')
    await axeBoth(t, page, 'Activity (export idle)')
    await shoot(page, 'idle')
    await page.getByRole('radio', { name: 'Everything, from the first record' }).check()
    t.equal(await page.locator('#export-from').count(), 0, 'no dates for everything')
    const query = asked(page)
    const file = await download(page)
    const whole = await apiExport(query())
    t.same([...query().keys()], [], 'no range, no filter')
    t.match(file.name, /^audit-events-\d{4}-\d{2}-\d{2}\.ndjson$/)
    t.equal(file.text, whole, 'the file is the API\'s export, byte for byte')
    const ids = idsOf(file.text, false)
    t.equal(ids.length, SEEDED, 'every record seeded')
    t.same([ids[0], ids.at(-1)], [idsOf(whole, false)[0], idsOf(whole, false).at(-1)], 'first and last ids')
    await page.locator('#export-progress', { hasText: `Saved ${file.name}: ${ids.length.toLocaleString('en-US')} records.` }).waitFor()
    t.same(problems, [], 'no script error')
    await context.close()
  })

  await t.test('the last 30 days as CSV, in the admin\'s time zone (Auckland)', async t => {
    const { context, page } = await openActivity(browser, base, admin.cookie, 'Pacific/Auckland')
    const [from, to] = await page.evaluate(() => {
      const d = new Date()
      const day = (x: Date) => `${x.getFullYear()}-${String(x.getMonth() + 1).padStart(2, '0')}-${String(x.getDate()).padStart(2, '0')}`
      return [day(new Date(d.getFullYear(), d.getMonth(), d.getDate() - 30)), day(d)]
    })
    t.equal(await page.locator('#export-from').inputValue(), from, 'from: 30 days ago, where the admin is')
    t.equal(await page.locator('#export-to').inputValue(), to, 'to: today')
    await page.getByRole('radio', { name: 'CSV' }).check()
    const query = asked(page)
    const file = await download(page)
    // Auckland is 13 hours ahead in its summer: each local midnight is 11:00 UTC the day before.
    t.match(query().get('since'), /^\d{4}-\d{2}-\d{2}T11:00:00\.000Z$/, 'since: the first day\'s local midnight')
    t.match(query().get('until'), /^\d{4}-\d{2}-\d{2}T11:00:00\.000Z$/, 'until: the midnight after the last day')
    const whole = await apiExport(query(), 'text/csv')
    t.match(file.name, /^audit-events-\d{4}-\d{2}-\d{2}\.csv$/)
    t.equal(file.text, whole, 'the file is the API\'s CSV export')
    t.equal(linesOf(file.text)[0], 'id,createdAt,action,actorType,actorId,actorLabel,source,targetType,targetId,payload')
    const ids = idsOf(file.text, true)
    t.equal(ids.length, 3000, 'the last 20 days\' records, not those of 60 days ago')
    t.same([ids[0], ids.at(-1)], [idsOf(whole, true)[0], idsOf(whole, true).at(-1)], 'first and last ids')
    await context.close()
  })

  await t.test('the list\'s filters narrow the export, and it says so', async t => {
    const { context, page } = await openActivity(browser, base)
    await page.getByLabel('What').selectOption('workspace.settings_changed')
    await page.getByLabel('Door').selectOption('web')
    await page.getByRole('button', { name: 'Filter' }).click()
    const said = page.locator('#export-filters')
    await said.filter({ hasText: 'The list\'s filters apply: What: workspace.settings_changed; Door: web.' }).waitFor()
    await page.getByRole('radio', { name: 'Everything, from the first record' }).check()
    const query = asked(page)
    const file = await download(page)
    t.same(Object.fromEntries(query()), { action: 'workspace.settings_changed', source: 'web' })
    const records = linesOf(file.text).map(l => JSON.parse(l) as { action: string, source: string })
    t.equal(records.length, 320, 'every tenth seeded')
    t.ok(records.every(r => r.action === 'workspace.settings_changed' && r.source === 'web'), 'only those')
    t.equal(file.text, await apiExport(query()), 'the API\'s export with the same filters')
    await context.close()
  })

  await t.test('a transfer cut mid-line resumes after the last complete line; the file is whole', async t => {
    const { context, page, problems } = await openActivity(browser, base)
    await page.getByRole('radio', { name: 'Everything, from the first record' }).check()
    const whole = await apiExport(new URLSearchParams())
    const lines = linesOf(whole)
    const complete = 1234
    const cut = lines.slice(0, complete).join('\n').length + 1 + 40 // 40 characters into the next line
    let release = () => {}
    const held = new Promise<void>(resolve => { release = resolve })
    const afters: Array<string | null> = []
    await page.route(`**${EXPORT}**`, async (route: Route) => {
      const after = new URL(route.request().url()).searchParams.get('after')
      afters.push(after)
      if (after === null) {
        await route.fulfill({ status: 200, contentType: 'application/x-ndjson', body: whole.slice(0, cut) })
        return
      }
      await held // the retry waits: the screen shows its progress meanwhile
      await route.continue()
    })
    const saved = page.waitForEvent('download')
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    await page.getByText('The connection dropped: resuming after 1,234 records…').waitFor()
    t.equal(await focused(page), 'Cancel', 'the focus on Cancel')
    await axeBoth(t, page, 'Activity (export in progress)')
    await shoot(page, 'in-progress')
    release()
    const file = await saved
    const text = await readFile(await file.path(), 'utf8')
    t.same(afters, [null, JSON.parse(lines[complete - 1] ?? '{}').id], 'the second request resumed after the last complete line')
    t.equal(text, whole, 'the saved file equals an uncut export')
    await page.locator('#export-progress', { hasText: `Saved ${file.suggestedFilename()}: ${lines.length.toLocaleString('en-US')} records.` }).waitFor()
    t.equal(await focused(page), 'Download', 'the focus back on Download')
    await shoot(page, 'saved')
    t.same(problems, [], 'no script error')

    // CSV: resumed without a second header.
    await page.unroute(`**${EXPORT}**`)
    const csv = await apiExport(new URLSearchParams(), 'text/csv')
    const csvCut = linesOf(csv).slice(0, 501).join('\r\n').length + 2 + 20
    await page.route(`**${EXPORT}**`, async (route: Route) => {
      if (new URL(route.request().url()).searchParams.get('after') === null) {
        await route.fulfill({ status: 200, contentType: 'text/csv', body: csv.slice(0, csvCut) })
      } else await route.continue()
    })
    await page.getByRole('radio', { name: 'CSV' }).check()
    const resumed = await download(page)
    t.equal(resumed.text, csv, 'a resumed CSV equals an uncut one: one header')
    const counted = `Saved ${resumed.name}: ${SEEDED.toLocaleString('en-US')} records.`
    await page.locator('#export-progress', { hasText: counted }).waitFor()
    t.pass(`${counted} (a record over two lines counted once)`)
    await context.close()
  })

  await t.test('cuts that keep coming: the bounded retries, then words, and what arrived saved', async t => {
    const { context, page } = await openActivity(browser, base)
    await page.getByRole('radio', { name: 'Everything, from the first record' }).check()
    const whole = await apiExport(new URLSearchParams())
    const lines = linesOf(whole)
    let requests = 0
    await page.route(`**${EXPORT}**`, async (route: Route) => {
      requests++
      if (requests === 1) await route.fulfill({ status: 200, contentType: 'application/x-ndjson', body: whole.slice(0, lines.slice(0, 100).join('\n').length + 10) })
      else await route.abort('connectionreset')
    })
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    const stopped = page.getByRole('alert').filter({ hasText: 'The export stopped: the connection dropped 6 times in a row.' })
    await stopped.waitFor({ timeout: 30_000 })
    t.equal(requests, 6, 'the first request and five retries')
    await page.getByText('100 records arrived before it stopped.').waitFor()
    const part = await download(page, page.getByRole('button', { name: 'Save the 100 records received' }))
    t.match(part.name, /^audit-events-\d{4}-\d{2}-\d{2}-partial\.ndjson$/)
    t.equal(part.text, `${lines.slice(0, 100).join('\n')}\n`, 'the complete lines that arrived, no more')
    await checkPage(t, page, 'Activity (export stopped)')
    await shoot(page, 'stopped')
    // Continue goes on after the last of them, once the connection is back.
    await page.unroute(`**${EXPORT}**`)
    const rest = await download(page, page.getByRole('button', { name: 'Continue' }))
    t.equal(rest.text, whole, 'continued: the whole export')
    await context.close()
  })

  await t.test('Cancel stops the export: nothing saved', async t => {
    const { context, page } = await openActivity(browser, base)
    let aborted = false
    await page.route(`**${EXPORT}**`, async () => { await new Promise(resolve => setTimeout(resolve, 60_000)) })
    page.on('requestfailed', r => { if (new URL(r.url()).pathname === EXPORT) aborted = true })
    let downloads = 0
    page.on('download', () => { downloads++ })
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    await page.locator('#export-progress', { hasText: '0 records…' }).waitFor()
    await page.getByRole('button', { name: 'Cancel' }).click()
    await page.locator('#live', { hasText: 'Export cancelled.' }).waitFor()
    t.equal(await page.getByRole('button', { name: 'Cancel' }).count(), 0, 'Cancel gone')
    t.equal(await page.getByRole('button', { name: 'Download', exact: true }).isEnabled(), true, 'Download again')
    await page.waitForTimeout(300)
    t.ok(aborted, 'the request was aborted')
    t.equal(downloads, 0, 'nothing saved')
    await context.close()
  })

  await t.test('refusals in words beside the control: a bad range, a member, an admin no more', async t => {
    const { context, page } = await openActivity(browser, base, other.cookie)
    // The last day before the first: refused here, nothing asked.
    await page.locator('#export-from').fill('2026-03-10')
    await page.locator('#export-to').fill('2026-03-01')
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    const to = page.locator('#export-to')
    await page.locator('#export-to-error', { hasText: 'Enter a date and time after the start.' }).waitFor()
    t.equal(await to.getAttribute('aria-invalid'), 'true')
    t.equal(await page.evaluate<string | undefined>('document.activeElement?.id'), 'export-to', 'the focus on the field')
    // A year the contract's date-time cannot hold: the service's 400, beside each field.
    await page.locator('#export-from').fill('10000-01-01')
    await page.locator('#export-to').fill('10000-01-02')
    const refused = page.waitForResponse(r => new URL(r.url()).pathname === EXPORT)
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    t.equal((await refused).status(), 400, 'the service refused the range')
    await page.locator('#export-from-error', { hasText: 'Enter a date and time.' }).waitFor()
    t.equal(await page.locator('#export-from').getAttribute('aria-invalid'), 'true')
    await checkPage(t, page, 'Activity (export, a refused range)')
    await shoot(page, 'refused-range')

    // No admin any more (another admin's change): the 403 in words at the form's foot.
    const demoted = await h.inject({ method: 'PATCH', url: `/api/users/${other.userId}`, headers: { cookie: admin.cookie }, payload: { role: 'member' } })
    t.equal(demoted.statusCode, 200)
    await page.getByRole('radio', { name: 'Everything, from the first record' }).check()
    await page.getByRole('button', { name: 'Download', exact: true }).click()
    const note = page.getByRole('form', { name: 'Export' }).getByRole('alert')
    await note.filter({ hasText: 'Only admins may do this.' }).waitFor()
    t.pass(`in words: ${String(await note.textContent())}`)
    await shoot(page, 'forbidden')
    await context.close()

    const asMember = await openActivityAs(browser, base, member.cookie)
    t.equal(await asMember.page.getByRole('form', { name: 'Export' }).count(), 0, 'a member has no Export')
    await asMember.context.close()
  })
})

/** A member asking for Activity: the console shows their profile under the address. */
async function openActivityAs (browser: Browser, base: string, cookie: string) {
  const { context, page } = await signedInPage(browser, base, cookie)
  await page.goto(`${base}/console/activity`)
  await page.getByRole('heading', { level: 1, name: 'Profile' }).waitFor()
  return { context, page }
}
