import t from 'tap'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { closedPort } from '../helpers/smtp.js'
import { launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'
import { tsImport } from '../helpers/service-process.js'

// The newcomer's first run, end to end: the real server (src/server.ts, as `npm run dev` runs it)
// on an empty DATA_DIR logs a setup link; in Chromium the /setup page creates the workspace and
// its admin, who lands on / signed in. No second command, no restart. The link then is refused.

const TITLE = 'empty DATA_DIR → setup link in the log → /setup in Chromium → signed in as admin'
t.test(TITLE, { skip, timeout: 180_000 }, async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-first-run-browser-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  // The embedded defaults, as on a new machine: no DATABASE_URL, no REDIS_URL, no SMTP_URL.
  const { DATABASE_URL: _db, REDIS_URL: _redis, SMTP_URL: _smtp, ...env } = process.env
  const child = spawn(process.execPath, [...tsImport, 'src/server.ts'], {
    cwd: projectRoot,
    env: { ...env, PORT: String(port), PUBLIC_URL: base, DATA_DIR: dir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  t.teardown(() => { if (child.exitCode === null) child.kill('SIGKILL') })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  let out = ''
  child.stderr.on('data', (c: Buffer) => { out += c.toString() })
  const link = await new Promise<string | null>(resolve => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /Open this link to set up the first workspace and its admin: (\S+?)"/.exec(out)
      if (m !== null) resolve(m[1] ?? null)
    })
    child.once('exit', () => { resolve(null) })
  })
  t.ok(link, 'the setup link is logged')
  t.match(link, `${base}/setup?token=`)

  const browser = await launchChromium(t)
  const context = await browser.newContext()
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  const problems = pageProblems(page)

  await page.goto(link ?? '')
  await page.locator('#setup').waitFor({ state: 'visible' })
  await page.fill('#workspace-name', 'Acme <First Run>')
  await page.fill('#email', 'founder@example.com')
  await page.fill('#name', 'Founder')
  await page.click('#setup-button')
  await page.waitForURL(`${base}/`)
  // An admin lands on the overview; who is signed in is on the Profile screen.
  await page.goto(`${base}/console/profile`)
  await t.resolves(
    page.locator('#me-email', { hasText: 'founder@example.com' }).waitFor({ state: 'visible' }),
    'the landing page shows the admin, signed in'
  )
  t.equal(await page.locator('#me-role').textContent(), 'admin')
  t.equal(await page.locator('#me-workspace').textContent(), 'Acme <First Run>', 'the workspace name, as text')

  // The browser's cookie is a real session: the API says who it is.
  const cookie = (await context.cookies()).find(c => c.name === SESSION_COOKIE)
  t.ok(cookie, 'the service_session cookie is set')
  const me = await fetch(`${base}/api/users/me`, { headers: { cookie: `${SESSION_COOKIE}=${cookie?.value ?? ''}` } })
  t.equal(me.status, 200)
  t.match(await me.json(), { user: { email: 'founder@example.com', name: 'Founder', role: 'admin' } })

  // Second use: the page says the service is set up, and the API refuses.
  await page.goto(link ?? '')
  await t.resolves(
    page.locator('#status', { hasText: 'set up already' }).waitFor({ state: 'visible' }),
    'the used link explains itself'
  )
  t.equal(await page.locator('#setup').isVisible(), false, 'no form')
  const again = await fetch(`${base}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      token: new URL(link ?? base).searchParams.get('token'), workspaceName: 'Twice', email: 'x@example.com'
    })
  })
  t.equal(again.status, 410)
  t.equal((await again.json() as { code?: string }).code, 'SETUP_COMPLETE')
  t.same(problems, [], 'no script errors and no CSP violations')

  child.kill('SIGTERM')
  t.equal(await exited, 0, 'SIGTERM: exit 0')
  t.notMatch(out, /"level":(50|60)/, 'nothing logged at error or fatal')
})
