import { readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { consoleAssets, consoleBuildDir } from '../src/console/assets.js'
import { median, type Pinning } from './load.js'
import type { Target } from './report.js'
import { startService, stop } from './servers.js'

// The admin console's figures (part of `npm run bench`; alone: `npm run bench -- --console`): all
// of its JavaScript and CSS gzipped, and in headless Chromium (Debian's, through playwright-core)
// on loopback, against the compiled service on PGlite with a workspace of 10,000 members, the time
// from navigation to the Members screen interactive (its first page of rows drawn, handlers
// attached), and to the next page; and the bytes of its script, chunks and styles on the wire (the
// browser's own transferSize, headers included) on a first load with an empty cache of each
// screen, on a reload, on a later visit, and when another screen is first opened.
// Targets (issue 27): ≤ 60 kB gzipped, first screen interactive ≤ 500 ms; (issues 42 and 43) a
// first load ≤ 25 kB of script and styles on the wire whichever screen it opens, a reload and a
// later visit download nothing again.

const CHROMIUM = '/usr/bin/chromium'

export async function measureConsole (
  pin: Pinning, smtpUrl: string, runs: number, write: (line: string) => void, members = 10_000
): Promise<Target[]> {
  // Every file of the build (the entry, each screen's chunk, the shared chunks), as published
  // gzipped: the code, target ≤ 60 kB (issue 27). The words apart (issue 54: a chunk per language
  // and per screen and language, console/i18n.ts): a reader fetches only their language's, so the
  // largest language's, every screen's, counts, target ≤ 25 kB (a first load's budget: the whole
  // console's words in one language fit in what one first load may weigh).
  const { files } = consoleAssets()
  const size = (f: string) => statSync(join(consoleBuildDir, `${f}.gz`)).size
  const languages = languageChunks(files)
  const words = languages.flat()
  const gzipped = (ext: string) => files.filter(f => f.endsWith(ext) && !words.includes(f))
    .reduce((n, f) => n + size(f), 0)
  const wordsOf = (language: string[]) => language.reduce((n, f) => n + size(f), 0)
  const js = gzipped('.js')
  const css = gzipped('.css')
  const largest = Math.max(0, ...languages.map(wordsOf))
  const chunks = Math.max(0, ...languages.map(l => l.length))
  write(`bench: console bundle ${js} B JavaScript (${files.length - 1 - words.length} files) + ${css} B CSS gzipped = ${
    kB(js + css)} kB; words: the largest of ${languages.length} languages ${largest} B in ${chunks} chunks (${
    kB(js + css + largest)} kB with them)\n`)
  const targets: Target[] = [
    { target: 'console JavaScript + CSS gzipped (kB) ≤ 60', value: (js + css) / 1024, met: js + css <= 60 * 1024 },
    {
      target: 'console words of one language, every screen, gzipped (kB) ≤ 25',
      value: largest / 1024,
      met: largest <= 25 * 1024
    }
  ]

  write(`bench: console in Chromium, Members over ${members} members (PGlite)\n`)
  const service = await startService(pin, 'pglite', smtpUrl, null, null, {}, 0, members)
  // The server-side search (GET /api/users?q=): 11 of 10,000 ("Member 123", "Member 1230"…); in
  // a smaller workspace (a smoke run) "Member 1" and the others whose name begins so.
  const probe = members >= 1240
    ? { query: 'member 123', found: /Member 1239\b/ }
    : { query: 'member 1', found: /Member 1\b/ }
  const { chromium } = await import('playwright-core')
  const browser = await chromium.launch({
    executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run']
  })
  try {
    const base = `http://127.0.0.1:${service.port}`
    const [name, value] = service.cookie.split('=') as [string, string]
    targets.push(...await wireBytes(browser, base, { name, value }, write))
    const context = await browser.newContext()
    await context.addCookies([{ name, value, url: base }])
    const page = await context.newPage()
    const interactive: number[] = []
    const nextPage: number[] = []
    const searched: number[] = []
    for (let i = 0; i <= runs; i++) {
      await page.goto(`${base}/console/members`, { waitUntil: 'commit' })
      // performance.now() counts from the navigation's start: the moment the first rows exist.
      // A function, not a string: the page's CSP forbids eval, which a string predicate needs.
      const at = await page.waitForFunction(
        // (Run in the page: `document` is the page's; this file is type-checked without the DOM library.)
        () => {
          const page = globalThis as unknown as { document: { querySelector(s: string): unknown } }
          return page.document.querySelector('tbody tr') !== null && performance.now()
        },
        undefined, { polling: 'raf' }
      )
      const ms = await at.jsonValue() as number
      const started = Date.now()
      await page.getByRole('button', { name: 'Next page' }).click()
      await page.getByText('Page 2').waitFor()
      const paged = Date.now() - started
      // The server-side search (GET /api/users?q=): 11 of the 10,000 ("Member 123", "Member 1230"…).
      const searchStarted = Date.now()
      await page.fill('#member-search', probe.query)
      await page.getByRole('button', { name: 'Find' }).click()
      await page.getByRole('row', { name: probe.found }).waitFor()
      if (i > 0) { // run 0 warms the caches
        interactive.push(ms)
        nextPage.push(paged)
        searched.push(Date.now() - searchStarted)
      }
    }
    const tti = median(interactive)
    const next = median(nextPage)
    const search = median(searched)
    const each = interactive.map(n => n.toFixed(0)).join(', ')
    write(`bench: console Members interactive after ${tti.toFixed(0)} ms (median of ${runs}; ${each}), next page ${
      next.toFixed(0)} ms, a search ${search.toFixed(0)} ms\n`)
    const spread = (xs: number[]) => ({ min: Math.min(...xs), max: Math.max(...xs) })
    targets.push(
      {
        target: `console Members (${members} members) interactive (ms) ≤ 500`,
        value: tti,
        met: tti <= 500,
        ...spread(interactive)
      },
      { target: `console Members (${members} members) next page (ms)`, value: next, met: true, ...spread(nextPage) },
      { target: `console Members (${members} members) search (ms)`, value: search, met: true, ...spread(searched) }
    )
  } finally {
    await browser.close()
    await stop(service.proc.child)
  }
  return targets
}

/**
 * Each language's words, as published files: its chunk (the shell's words as a JSON string and
 * the table of its screens' words, `var e='{…}',i={members:()=>import("./console.<hash>.js"),…};
 * export{e as default,i as screens};`, scripts/lib/console-build.ts) and the chunks that table
 * names (`var e='{…}';export{e as default};`).
 */
function languageChunks (files: string[]): string[][] {
  return files.flatMap(name => {
    if (!name.endsWith('.js')) return []
    const code = readFileSync(join(consoleBuildDir, name), 'utf8')
    const m = /^var (\w+)=(['"`].*?['"`]),(\w+)=\{(.*)\};export\{\1 as default,\3 as screens\};?$/s.exec(code)
    if (m === null || !isJsonObject(m[2] ?? '')) return []
    const screens = [...(m[4] ?? '').matchAll(/import\("\.\/([^"]+)"\)/g)].map(i => i[1] ?? '')
    return [[name, ...screens.filter(f => files.includes(f))]]
  })
}

function isJsonObject (literal: string): boolean {
  try {
    const words: unknown = JSON.parse(String(runInNewContext(literal)))
    return typeof words === 'object' && words !== null
  } catch {
    return false
  }
}

/** The console's files as the browser fetched them: bytes on the wire (0: from its cache), each file. */
interface Transfer { name: string, bytes: number }
async function staticTransfers (page: import('playwright-core').Page): Promise<Transfer[]> {
  // A screen is drawn (its heading shown) once its chunk and every chunk that one imports arrived.
  await page.locator('#main h1').waitFor()
  // (Run in the page; this file is type-checked without the DOM library.)
  return await page.evaluate(() => performance.getEntriesByType('resource')
    .filter(e => e.name.includes('/static/'))
    .map(e => ({
      name: e.name.replace(/^.*\/static\//, ''),
      bytes: (e as unknown as { transferSize: number }).transferSize
    })))
}

const total = (xs: Transfer[]) => xs.reduce((n, x) => n + x.bytes, 0)
const kB = (n: number) => (n / 1024).toFixed(1)

/**
 * The console's script, chunks and styles on the wire in Chromium: the first load of each screen
 * with an empty cache (a fresh browser context each), then, on Members, a reload, a later visit
 * (a new navigation to the page) and another screen opened for the first time.
 */
async function wireBytes (
  browser: import('playwright-core').Browser,
  base: string,
  cookie: { name: string, value: string },
  write: (line: string) => void
): Promise<Target[]> {
  const fresh = async () => {
    const context = await browser.newContext()
    await context.addCookies([{ ...cookie, url: base }])
    return { context, page: await context.newPage() }
  }
  const { context, page } = await fresh()
  try {
    await page.goto(`${base}/console/members`)
    const first = await staticTransfers(page)
    // The screens, as the navigation lists them: each opened first, in a browser of its own.
    const paths = await page.locator('nav a').evaluateAll(links => links.map(a => a.getAttribute('href') ?? ''))
    const firsts: Array<{ path: string, files: number, bytes: number }> = []
    for (const path of paths) {
      const other = await fresh()
      try {
        await other.page.goto(`${base}${path}`)
        const got = await staticTransfers(other.page)
        firsts.push({ path, files: got.length, bytes: total(got) })
      } finally {
        await other.context.close()
      }
    }
    await page.reload()
    const reload = await staticTransfers(page)
    await page.goto(`${base}/console/members`)
    const visit = await staticTransfers(page)
    await page.goto(`${base}/console/invitations`)
    const another = await staticTransfers(page)
    const each = (xs: Transfer[]) => xs.map(x => `${x.name} ${x.bytes} B`).join(', ')
    const largest = firsts.reduce((a, b) => b.bytes > a.bytes ? b : a)
    const wire = 'bench: console on the wire'
    write(`${wire}, first load of Members ${total(first)} B = ${kB(total(first))} kB in ${first.length} files (${
      each(first)})\n`)
    write(`${wire}, first load of each screen: ${
      firsts.map(f => `${f.path} ${f.bytes} B (${f.files} files)`).join(', ')}\n`)
    write(`${wire}, reload ${total(reload)} B (${reload.length} files), next visit ${total(visit)} B (${
      visit.length} files), Invitations opened next ${total(another)} B (${
      each(another.filter(x => x.bytes > 0))})\n`)
    // Nothing fetched again: every file of the load in the cache (a load that fetched no file
    // would measure nothing).
    const none = (xs: Transfer[]) => xs.length >= 2 && total(xs) === 0
    const target = 'console script + styles on the wire'
    return [
      {
        target: `${target}, first load of Members (kB) ≤ 25`,
        value: total(first) / 1024,
        met: first.length >= 2 && total(first) <= 25 * 1024
      },
      {
        target: `${target}, first load of any screen (kB, the largest: ${largest.path}) ≤ 25`,
        value: largest.bytes / 1024,
        met: largest.bytes <= 25 * 1024
      },
      { target: `${target}, reload (B) = 0`, value: total(reload), met: none(reload) },
      { target: `${target}, next visit (B) = 0`, value: total(visit), met: none(visit) },
      // Only the new screen's own chunks: nothing the first load brought (the shell, the styles).
      {
        target: `${target}, Invitations opened next (B): none of the first load's files again`,
        value: total(another),
        met: another.filter(x => x.bytes > 0).every(x => !first.some(f => f.name === x.name))
      }
    ]
  } finally {
    await context.close()
  }
}

/** `npm run bench -- --console`: the console's figures alone (built first, unless --no-build). */
export async function runConsoleBench (
  o: { pin: Pinning, runs: number, members: number, write: (line: string) => void }
): Promise<Target[]> {
  const { startSinkSmtp } = await import('../scripts/lib/measure-peers.js')
  const smtp = await startSinkSmtp()
  try {
    const goals = await measureConsole(o.pin, smtp.url, o.runs, o.write, o.members)
    for (const g of goals) o.write(`${g.met ? 'MET ' : 'MISS'}  ${g.target}: ${g.value.toFixed(2)}\n`)
    return goals
  } finally {
    await smtp.close()
  }
}
