import t from 'tap'
import type { Browser, Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { checkPage, launchChromium, pageProblems, skipWithoutChromium as skip, withCookie } from '../helpers/browser.js'
import { updateUserLocale } from '../../src/db/users.js'

// The console in the reader's language (issue 54, item 3): its words come from the catalogues
// (src/i18n/catalogues/<locale>/console.json), a chunk per language fetched at start, chosen by
// the member's own locale, else the workspace's default, else the browser's language, else
// English. A German admin reads German headings and buttons under <html lang="de">; an Arabic one
// reads right to left (dir=rtl), axe-core clean at 360 and 1280 px. Every screen's first load,
// its language chunk counted, stays within the 25 kB budget on the wire (an empty cache).

/** The screens, as the console's route table (console/routes.ts) has them. */
const SCREENS = ['/', ...['members', 'invitations', 'invite-links', 'requests', 'api-keys', 'webhooks', 'domains',
  'directory', 'sso', 'activity', 'settings', 'profile'].map(s => `/console/${s}`)]

const h = await build(t)
const port = (await h.app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()
const base = `http://127.0.0.1:${String(port)}`

interface Reader {
  viewport?: { width: number, height: number }
  browserLocale?: string
  workspaceLocale?: string
  role?: 'admin' | 'member'
}

/** A new workspace's admin (or member) whose own language is `locale` (null: none), signed in in a new context. */
async function adminIn (browser: Browser, locale: string | null, opts: Reader = {}) {
  const admin = await h.signIn({ role: opts.role ?? 'admin', workspaceName: 'Acme Robotics' })
  await updateUserLocale(h.db, admin.workspaceId, admin.userId, locale, new Date())
  if (opts.workspaceLocale !== undefined) {
    const set = await h.inject({
      method: 'PATCH',
      url: '/api/workspace/settings',
      headers: { cookie: admin.cookie, 'content-type': 'application/json' },
      payload: { locale: opts.workspaceLocale }
    })
    if (set.statusCode !== 200) throw new Error(`workspace locale: ${set.statusCode} ${set.body}`)
  }
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 900 }, locale: opts.browserLocale ?? 'en-US' })
  await withCookie(context, base, admin.cookie)
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  return { context, page, problems: pageProblems(page) }
}

/** The console's files the page fetched so far, bytes on the wire (as bench/console.ts counts them). */
async function staticFiles (page: Page) {
  return await page.evaluate(() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/static/'))
    .map(e => ({
      name: e.name.replace(/^.*\/static\//, ''),
      bytes: (e as unknown as { transferSize: number }).transferSize
    })))
}

/** `<html lang dir>` as the console set them. */
const root = async (page: Page) =>
  await page.evaluate<{ lang: string, dir: string }>('({ lang: document.documentElement.lang, dir: document.documentElement.dir })')

t.test('German: the shell\'s headings, links and buttons in German, <html lang="de">; one language chunk', { skip, timeout: 120_000 }, async t => {
  const browser = await launchChromium(t)
  const { context, page, problems } = await adminIn(browser, 'de')
  await page.goto(`${base}/console/members`)
  await page.getByRole('heading', { level: 1, name: 'Mitglieder' }).waitFor()
  t.same(await root(page), { lang: 'de', dir: 'ltr' })
  t.equal(await page.title(), 'Mitglieder · Acme Robotics', 'the title in German')
  const nav = page.getByRole('navigation', { name: 'Konsole' })
  for (const name of ['Übersicht', 'Einladungen', 'Einladungslinks', 'API-Schlüssel', 'Aktivität', 'Einstellungen']) {
    t.equal(await nav.getByRole('link', { name, exact: true }).count(), 1, `the link ${name}`)
  }
  t.equal(await page.getByRole('link', { name: 'Zum Inhalt springen' }).count(), 1, 'the skip link')
  t.equal(await page.getByRole('link', { name: 'API-Referenz' }).count(), 1, 'the footer')
  // The not-found screen: its sentence and heading in German, the path as code within it.
  await page.goto(`${base}/console/nowhere`)
  await page.getByRole('heading', { level: 1, name: 'Nicht gefunden' }).waitFor()
  t.equal(await page.locator('#not-found').textContent(),
    'Unter /console/nowhere gibt es keine Seite. Vielleicht wurde sie verschoben, oder die Adresse enthält einen Tippfehler.')
  t.equal(await page.locator('#not-found code').textContent(), '/console/nowhere')
  t.equal(await page.getByRole('heading', { level: 2, name: 'Die Seiten' }).count(), 1)
  // Words only from the German chunk (a catalogue's JSON text): no English words downloaded.
  const chunks = []
  for (const f of await staticFiles(page)) {
    const body = await (await page.request.get(`${base}/static/${f.name}`)).text()
    if (body.includes('{"workspace":"')) chunks.push(body.includes('Sie sind nicht angemeldet') ? 'de' : 'other')
  }
  t.notOk(chunks.length === 0, 'the words came in a chunk')
  t.same(chunks, ['de'], 'one language chunk fetched, the German one')
  await checkPage(t, page, 'Not found (admin, German)')
  t.same(problems, [], 'no script error')
  await context.close()
})

t.test('a screen\'s own words stay its own: Overview\'s \'signedInAs\' is not Profile\'s', { skip, timeout: 120_000 }, async t => {
  const browser = await launchChromium(t)
  const { context, page, problems } = await adminIn(browser, 'de')
  await page.goto(`${base}/`)
  const status = page.locator('#status')
  await page.getByRole('heading', { level: 1, name: 'Übersicht' }).waitFor()
  t.match(await status.textContent(), /^Angemeldet als \S+@\S+ · Ihr Profil$/, 'Overview\'s line, with its link')
  // Opened through the console's own navigation (no page load): both screens' words are loaded
  // now in one app (Overview's own link to the profile is a plain link, which loads the page anew).
  await page.getByRole('navigation', { name: 'Konsole' }).getByRole('link', { name: 'Profil', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: 'Profil' }).waitFor()
  t.match(await status.textContent(), /^Angemeldet als \S+@\S+$/, 'Profile\'s line is the shell\'s message')
  t.same(problems, [], 'no script error')
  await context.close()
})

// An admin reads the workspace's settings, its default language (`en` unless set) included; a
// member cannot, and falls back on the browser's.
t.test('the language chosen: the member\'s own, else the workspace\'s, else the browser\'s, else English', { skip, timeout: 120_000 }, async t => {
  const browser = await launchChromium(t)
  const cases: Array<[string, string | null, Reader, string, string]> = [
    ['own (Japanese) over the workspace\'s and the browser\'s', 'ja', { browserLocale: 'de-CH', workspaceLocale: 'fr' }, 'ja', 'メンバー'],
    ['an admin: the workspace\'s (French) over the browser\'s', null, { browserLocale: 'de-CH', workspaceLocale: 'fr' }, 'fr', 'Membres'],
    ['a member: the browser\'s (de-CH → German)', null, { browserLocale: 'de-CH', role: 'member' }, 'de', 'Profil'],
    ['a member, none of ours (a Korean browser): English', null, { browserLocale: 'ko-KR', role: 'member' }, 'en', 'Profile']
  ]
  for (const [what, own, opts, lang, heading] of cases) {
    const { context, page } = await adminIn(browser, own, opts)
    await page.goto(`${base}${opts.role === 'member' ? '/console/profile' : '/console/members'}`)
    await page.getByRole('heading', { level: 1, name: heading }).waitFor()
    t.equal((await root(page)).lang, lang, what)
    if (heading === 'Profil') {
      // The Profile screen's own words: a member's one screen.
      t.equal(await page.getByRole('heading', { level: 2, name: 'Ihr Profil' }).count(), 1, 'its heading in German')
      t.equal(await page.getByRole('button', { name: 'Abmelden' }).count(), 1, 'Sign out in German')
      t.equal(await page.getByRole('heading', { level: 2, name: 'Meine Anfragen' }).count(), 1, 'My requests in German')
    }
    await context.close()
  }
})

t.test('Arabic: right to left, axe-core clean at 360 and 1280 px', { skip, timeout: 180_000 }, async t => {
  const browser = await launchChromium(t)
  for (const width of [360, 1280]) {
    const { context, page, problems } = await adminIn(browser, 'ar', { viewport: { width, height: 900 } })
    await page.goto(`${base}/console/members`)
    await page.getByRole('heading', { level: 1, name: 'الأعضاء' }).waitFor()
    await page.locator('tbody tr').first().waitFor()
    t.same(await root(page), { lang: 'ar', dir: 'rtl' })
    t.equal(await page.getByRole('navigation', { name: 'وحدة التحكم' }).getByRole('link', { name: 'الإعدادات' }).count(), 1)
    // Laid out right to left: the first navigation link starts at the right.
    const box = await page.getByRole('navigation').getByRole('link').first().boundingBox()
    t.ok(box !== null && box.x + box.width > width / 2, `the first link on the right at ${width} px`)
    t.equal(await page.evaluate<number>('document.documentElement.scrollWidth'), width, `no side scroll at ${width} px`)
    await checkPage(t, page, `Members (admin, Arabic, ${width} px)`)
    if (process.env.CONSOLE_SCREENSHOTS !== undefined && process.env.CONSOLE_SCREENSHOTS !== '') {
      await page.screenshot({ path: `${process.env.CONSOLE_SCREENSHOTS}/console-members-ar-${width}.png`, fullPage: true })
    }
    t.same(problems, [], 'no script error')
    await context.close()
  }
})

t.test('every screen\'s first load, its language chunk counted, within 25 kB on the wire', { skip, timeout: 300_000 }, async t => {
  const browser = await launchChromium(t)
  // English, and Japanese and Arabic: the largest chunks.
  for (const locale of ['en', 'ja', 'ar']) {
    const figures: string[] = []
    for (const path of SCREENS) {
      const { context, page } = await adminIn(browser, locale)
      await page.goto(`${base}${path}`)
      await page.locator('#main h1').waitFor()
      await page.waitForLoadState('networkidle')
      const files = await staticFiles(page)
      const bytes = files.reduce((n, f) => n + f.bytes, 0)
      figures.push(`${path} ${bytes} B (${files.length} files)`)
      t.ok(files.length >= 2 && bytes <= 25 * 1024, `${locale} ${path}: ${bytes} B ≤ 25 kB`)
      await context.close()
    }
    t.comment(`first loads (${locale}): ${figures.join(', ')}`)
  }
})
