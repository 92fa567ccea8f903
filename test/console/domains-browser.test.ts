import t, { type Test } from 'tap'
import dns2 from 'dns2'
import type { Page } from 'playwright-core'
import { build } from '../helpers/build.js'
import { closedPort, startSmtp } from '../helpers/smtp.js'
import { checkPage, launchChromium, pageProblems, skipWithoutChromium as skip } from '../helpers/browser.js'

// The Domains screen and the /domain-join page in headless Chromium, under their real CSP: an
// admin adds a domain, copies its TXT record, checks it against a loopback DNS server (dns2),
// sets auto-join; a person at the domain asks for a sign-in link on /login, opens the join link
// and joins. axe-core: no serious or critical violation on either.

const { Packet } = dns2
const records = new Map<string, string[]>()
const dns = dns2.createServer({
  udp: true,
  handle: (request, send) => {
    const response = Packet.createResponseFromRequest(request)
    const name = request.questions[0]?.name ?? ''
    const value = records.get(name)
    if (value !== undefined) {
      const answer = { name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: value }
      response.answers.push(answer as unknown as (typeof response.answers)[number])
    }
    send(response)
  }
})

async function axe (t: Test, page: Page, what: string): Promise<void> { await checkPage(t, page, what) }

t.test('Domains screen: add, copy the record, check, auto-join; a person joins through /domain-join', { skip, timeout: 300_000 }, async t => {
  const addresses = await dns.listen({ udp: { port: 0, address: '127.0.0.1' } })
  t.teardown(async () => { await dns.close() })
  const smtp = await startSmtp(t)
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const h = await build(t, {
    env: { SMTP_URL: smtp.url, PUBLIC_URL: base, DNS_SERVERS: `127.0.0.1:${addresses.udp?.port ?? 0}`, DNS_TIMEOUT_MS: '500' }
  })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: 'ada@acme-robotics.com' })

  const browser = await launchChromium(t)
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const [name, value] = admin.cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Lax' }])
  const page = await context.newPage()
  page.setDefaultTimeout(20_000)
  const problems = pageProblems(page)

  await page.goto(`${base}/console/domains`)
  await page.getByRole('heading', { level: 1, name: 'Domains' }).waitFor()
  t.equal(await page.title(), 'Domains · Acme Robotics')
  await page.getByLabel('Domain', { exact: true }).fill('Acme-Robotics.com')
  await page.getByLabel('Who may join through it').selectOption('suggest')
  await page.getByRole('button', { name: 'Add the domain' }).click()
  await page.locator('#live', { hasText: 'acme-robotics.com added' }).waitFor()
  const recordName = await page.getByLabel('Record name').inputValue()
  const recordValue = await page.getByLabel('Record value').inputValue()
  t.equal(recordName, '_workspace-verification.acme-robotics.com')
  t.match(recordValue, /^ws-verify=/)
  await page.getByRole('button', { name: 'Copy record value' }).click()
  await page.locator('#live', { hasText: 'copied' }).waitFor()
  t.equal(await page.evaluate(async () => await (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), recordValue, 'the copy button copies the value')
  t.match(await page.locator('.card .tag').first().textContent(), 'pending')
  await axe(t, page, 'Domains (a pending domain)')

  // Not published yet: still pending, and why; published: verified.
  await page.getByRole('button', { name: 'Check acme-robotics.com now' }).click()
  await page.locator('#live', { hasText: 'no TXT record' }).waitFor()
  records.set(recordName, [recordValue])
  await page.getByRole('button', { name: 'Check acme-robotics.com now' }).click()
  await page.locator('#live', { hasText: 'acme-robotics.com is verified' }).waitFor()
  await page.locator('.card .tag', { hasText: 'verified' }).waitFor()
  await page.getByLabel('Who may join through acme-robotics.com').selectOption('auto_join')
  await page.locator('#live', { hasText: 'policy auto-join' }).waitFor()
  await axe(t, page, 'Domains (verified, auto-join)')

  // A person at the domain, in a browser of their own.
  const person = await browser.newContext()
  const p = await person.newPage()
  p.setDefaultTimeout(20_000)
  const personProblems = pageProblems(p)
  await p.goto(`${base}/login`)
  const seen = smtp.messages.length
  await p.getByLabel('E-mail address').fill('grace@acme-robotics.com')
  await p.getByRole('button', { name: 'E-mail me a sign-in link' }).click()
  const mail = await smtp.nextMessage(seen)
  t.equal(mail.subject, 'Join Acme Robotics')
  const link = /http\S+\/domain-join\?token=[A-Za-z0-9_-]+/.exec(mail.text)?.[0] ?? ''
  t.ok(link.startsWith(base), 'the link opens this service')
  await p.goto(link)
  await p.getByRole('button', { name: 'Join Acme Robotics as grace@acme-robotics.com' }).waitFor()
  t.equal(await p.locator('#join-domain').textContent(), 'acme-robotics.com')
  await axe(t, p, '/domain-join (auto-join)')
  await p.getByLabel('Your name (optional)').fill('Grace Hopper')
  await p.getByRole('button', { name: 'Join Acme Robotics as grace@acme-robotics.com' }).click()
  await p.waitForURL(`${base}/`)
  await p.locator('#me-email', { hasText: 'grace@acme-robotics.com' }).waitFor()

  // The admin removes the domain.
  await page.getByRole('button', { name: 'Remove acme-robotics.com' }).click()
  await page.getByRole('button', { name: 'Yes, remove acme-robotics.com' }).click()
  await page.locator('#live', { hasText: 'acme-robotics.com was removed' }).waitFor()
  await page.getByText('No domains.').waitFor()
  t.same(problems, [], 'no script error or CSP violation on the console')
  t.same(personProblems, [], 'none on the join page')
})
