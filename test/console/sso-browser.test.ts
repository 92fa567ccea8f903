import t from 'tap'
import { randomBytes } from 'node:crypto'
import { build } from '../helpers/build.js'
import { closedPort } from '../helpers/smtp.js'
import { startOidcProvider } from '../helpers/oidc-provider.js'
import { RealTimeClock, verifiedDomain } from '../helpers/sso-sign-in.js'
import { checkPage, launchChromium, signedInPage, skipWithoutChromium as skip } from '../helpers/browser.js'

// The SSO screen (issue 53, item 7) in headless Chromium under the page's CSP, against a real
// OpenID Provider on loopback (oidc-provider, set up like Okta): an admin adds a connection with
// the Okta guide, copies its redirect URI, tries it with Test sign-in (a new tab ending on the
// claims received, nobody signed in), turns the enforcement on (an e-mailed sign-in link is then
// refused at the domain) and deletes it after the confirm step; a SAML connection with a
// certificate that does not parse, and a domain another connection serves, are refused in words
// beside their field. axe-core at 1280 and 360 px; screenshots with CONSOLE_SCREENSHOTS.

const ACME = 'acme-robotics.com'

t.test('SSO screen: add, copy, test sign-in, require, refusals in words, delete', { skip, timeout: 300_000 }, async t => {
  const port = await closedPort()
  const base = `http://127.0.0.1:${port}`
  const idp = await startOidcProvider(t, {
    redirectUris: [`${base}/api/oauth/sso/callback`],
    profiles: [{ name: 'okta', kind: 'okta', accounts: { sam: { email: `sam@${ACME}`, email_verified: true, name: 'Sam Stone' } } }]
  })
  const okta = idp.profile('okta')
  const h = await build(t, {
    clock: new RealTimeClock(),
    env: { PUBLIC_URL: base, ENCRYPTION_KEY: randomBytes(32).toString('hex'), AUTH_RATE_LIMIT_PER_MINUTE: '1000' }
  })
  await h.app.listen({ port, host: '127.0.0.1' })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme Robotics', email: `ada@${ACME}` })
  await verifiedDomain(h, admin.workspaceId, ACME)

  const browser = await launchChromium(t)
  const { context, page, problems } = await signedInPage(browser, base, admin.cookie)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })

  await page.goto(`${base}/console/sso`)
  await page.getByRole('heading', { level: 1, name: 'SSO' }).waitFor()
  t.equal(await page.title(), 'SSO · Acme Robotics')
  await page.getByText('No connection yet.').waitFor()
  t.match(await page.locator('#sso-guide').textContent(), /^Okta, OpenID Connect: Applications → Create App Integration/, 'the Okta guide')
  await page.getByLabel('Provider', { exact: true }).selectOption('entra')
  t.match(await page.locator('#sso-guide').textContent(), /App registrations → New registration/, 'the Entra ID guide')
  await page.getByLabel('Directory (tenant) ID', { exact: true }).waitFor()
  await page.getByLabel('Provider', { exact: true }).selectOption('google')
  t.match(await page.locator('#sso-guide').textContent(), /Google Cloud console/, 'the Google Workspace guide')
  await page.getByLabel('Provider', { exact: true }).selectOption('okta')
  await checkPage(t, page, 'SSO (no connection)')

  // Okta over OpenID Connect, members only.
  /** The form filled for Okta over OpenID Connect at the domain, and sent. */
  const addOkta = async (name: string) => {
    await page.getByLabel('Name (on the sign-in button)', { exact: true }).fill(name)
    await page.getByLabel(ACME, { exact: true }).check()
    await page.getByLabel('Issuer', { exact: true }).fill(okta.issuer)
    await page.getByLabel('Client ID', { exact: true }).fill(okta.clientId)
    await page.getByLabel('Client secret', { exact: true }).fill(okta.clientSecret)
    await page.getByRole('button', { name: 'Add the connection' }).click()
  }
  await addOkta('Okta')
  await page.locator('#live', { hasText: 'Okta added: paste its redirect URI into the provider' }).waitFor()
  const card = page.locator('.cards > li', { has: page.getByRole('heading', { name: /^Okta/ }) })
  await card.waitFor()
  t.ok(await card.getByRole('heading', { name: /^Okta/ }).evaluate(el => el === el.ownerDocument.activeElement), 'the focus on the new connection')
  t.match(await card.textContent(), `Domains: ${ACME}`)
  const redirect = await card.getByLabel('Redirect URI').inputValue()
  t.equal(redirect, `${base}/api/oauth/sso/callback`, 'the redirect URI to paste into Okta')
  await card.getByRole('button', { name: 'Copy Redirect URI' }).click()
  await page.locator('#live', { hasText: 'Redirect URI copied' }).waitFor()
  t.equal(await page.evaluate(async () => await (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), redirect, 'copied')
  await checkPage(t, page, 'SSO (an OpenID Connect connection)')

  // Test sign-in: a new tab, through Okta's login form, ends on the claims; nobody is signed in.
  const sessions = async () => (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM sessions')).rows[0]?.n
  const before = await sessions()
  const [tab] = await Promise.all([context.waitForEvent('page'), card.getByRole('link', { name: 'Test sign-in' }).click()])
  await tab.getByLabel('Login').fill('sam')
  await tab.getByRole('button', { name: 'Sign in' }).click()
  await tab.waitForURL(/\/api\/oauth\/sso\/callback/)
  const claims = JSON.parse(await tab.locator('body').innerText()) as Record<string, unknown>
  t.match(claims, { protocol: 'oidc', subject: 'sam', email: `sam@${ACME}`, emailVerified: true }, 'the claims received')
  t.equal(await sessions(), before, 'no session made by the test')
  await tab.close()

  // The same domain again: refused beside the domains; a SAML certificate that does not parse, beside it.
  await addOkta('Okta again')
  const taken = page.locator('#sso-domains-error')
  await taken.waitFor()
  t.match(await taken.textContent(), /^Another connection serves one of these domains/, 'SSO_DOMAIN_TAKEN in words')
  t.equal(await page.getByLabel(ACME, { exact: true }).getAttribute('aria-invalid'), 'true')
  t.ok(await page.getByLabel(ACME, { exact: true }).evaluate(el => el === el.ownerDocument.activeElement), 'the focus on the domains')
  await page.getByLabel(ACME, { exact: true }).uncheck()
  await page.getByLabel('SAML 2.0', { exact: true }).check()
  t.match(await page.locator('#sso-guide').textContent(), /^Okta, SAML 2.0: Applications → Create App Integration → SAML 2.0/)
  await page.getByLabel('Name (on the sign-in button)', { exact: true }).fill('Company IdP')
  await page.getByLabel('Metadata URL', { exact: true }).fill(`${idp.origin}/saml/metadata`)
  await page.getByLabel(/^Signing certificates/).fill('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----')
  await page.getByRole('button', { name: 'Add the connection' }).click()
  const cert = page.locator('#sso-certs-error')
  await cert.waitFor()
  t.match(await cert.textContent(), /^This does not read as an X\.509 certificate/, 'SSO_CERTIFICATE_INVALID in words')
  t.ok(await page.locator('#sso-certs').evaluate(el => el === el.ownerDocument.activeElement), 'the focus on the certificates')
  await checkPage(t, page, 'SSO (refused in words)')

  // Required: the e-mailed sign-in link is refused at the domain; off again, it is not.
  const loginLink = async (): Promise<string> => {
    const res = await h.inject({
      method: 'POST', url: '/api/auth/login-link', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ email: `sam@${ACME}` })
    })
    return res.statusCode === 403 ? res.json<{ code: string }>().code : String(res.statusCode)
  }
  t.not(await loginLink(), 'SSO_REQUIRED')
  const enforce = card.getByRole('switch', { name: 'Require sign-in through Okta' })
  await enforce.check()
  await page.locator('#live', { hasText: `Okta: sign-in by SSO required for ${ACME}` }).waitFor()
  await card.locator('.tag', { hasText: 'required' }).waitFor()
  t.ok(await enforce.isChecked(), 'the switch on')
  t.equal(await loginLink(), 'SSO_REQUIRED', 'e-mailed links refused at the domain')
  t.match(await card.textContent(), /admins keep an e-mailed link as a break-glass/)

  // At 360 px: one column, nothing wider than the screen.
  await page.setViewportSize({ width: 360, height: 800 })
  t.ok(await page.evaluate(() => { const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number, clientWidth: number } } }).document.documentElement; return d.scrollWidth <= d.clientWidth }), 'no side scroll at 360 px')
  await checkPage(t, page, 'SSO (required, 360 px)')
  await page.setViewportSize({ width: 1280, height: 900 })

  await card.getByRole('button', { name: 'Delete Okta' }).click()
  await page.getByRole('button', { name: 'Yes, delete Okta' }).click()
  await page.locator('#live', { hasText: `Okta was deleted: ${ACME} sign in by e-mailed link again` }).waitFor()
  await page.getByText('No connection yet.').waitFor()
  t.not(await loginLink(), 'SSO_REQUIRED', 'the e-mailed link again')
  t.same(problems, [], 'no script error or CSP violation')
})
