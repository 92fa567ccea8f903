import t, { type Test } from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { prefersHtml } from '../../src/http/accept.js'
import { refusalPage, refusalWords, testSignInPage } from '../../src/sso/pages.js'
import { samlEndpoints } from '../../src/sso/connection-context.js'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startOidcProvider } from '../helpers/oidc-provider.js'
import { createTestIdp, makeKeyPair } from '../helpers/saml-idp.js'
import {
  cookieOf, createConnection, ENCRYPTION_KEY, PUBLIC_URL, RealTimeClock, refusals, verifiedDomain
} from '../helpers/sso-sign-in.js'

// Issue 53: a person whose SSO sign-in signs no one in reads a page in words, with the answer's
// status; an admin's test sign-in is a page too. Only a browser's navigation (Accept preferring
// text/html) gets them: API clients keep the JSON, byte for byte. The negotiation, the words of
// each reason family, the escaping, then each of the three operations over HTTP.

/** Chromium's Accept on a navigation (a top-level GET, and the IdP's auto-posted form). */
const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,' +
  'application/signed-exchange;v=b3;q=0.7'

t.test('prefersHtml: a browser\'s navigation, not an API client', async t => {
  const cases: Array<[string | undefined, boolean]> = [
    [BROWSER, true],
    ['text/html', true],
    ['text/*', true],
    ['application/json;q=0.5, text/html', true],
    [' TEXT/HTML ; q=1 , application/json;q=0.9', true],
    [undefined, false],
    ['', false],
    ['*/*', false],
    ['application/json', false],
    ['application/json, text/plain, */*', false], // axios
    ['text/html, application/json', false], // a tie: JSON
    ['text/html;q=0.5, application/json', false],
    ['application/json;q=0, text/html;q=0', false],
    ['text/html;q=0, */*', false],
    ['text/html;q=2', false], // a malformed q counts as 0
    ['text, html', false],
    ['text/html/x', false]
  ]
  for (const [accept, expected] of cases) t.equal(prefersHtml(accept), expected, `${JSON.stringify(accept)} → ${expected}`)
})

/** The page's text as a person reads it: tags dropped, entities of the page's own escaping undone. */
function words (html: string): string {
  const body = html.slice(html.indexOf('<body>'))
  return body.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, '\'').replace(/&quot;/g, '"').replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>').replace(/&amp;/g, '&').replace(/\s+/g, ' ').trim()
}

/** What a person is told per reason family, in words; a suspended member's answer (`not_a_member`) is a stranger's. */
const FAMILIES: Array<[family: string, reasons: string[], says: RegExp]> = [
  ['start again', ['state_mismatch', 'state_expired', 'state_replayed', 'in_response_to_mismatch', 'replayed'],
    /expired, was already used, or was started in another browser\. Go back to the sign-in page and start again/],
  ['ask the admin to invite', ['not_a_member', 'no_email', 'domain_not_served', 'email_not_verified'],
    /not with an account this workspace accepts\. Ask your workspace admin to invite you/],
  ['cancelled at the provider', ['provider_error', 'status_not_success'],
    /did not complete the sign-in\. Start again; if it keeps happening, contact your workspace admin/],
  ['not verified', ['bad_signature', 'unsigned', 'wrong_certificate', 'audience_mismatch', 'issuer_mismatch',
    'malformed', 'a_reason_added_later'],
  /could not be verified\. Start again; if it keeps happening, contact your workspace admin/],
  ['the provider is down', ['provider_unreachable', 'client_rejected', 'no_certificate'],
    /single sign-on is not working right now\. Try again in a few minutes/]
]

t.test('the refusal page: each reason family in words, the code small, a way back', async t => {
  for (const [family, reasons, says] of FAMILIES) {
    for (const reason of reasons) {
      const page = refusalPage({ status: 403, code: 'SSO_SIGN_IN_REFUSED', reason })
      const text = words(page.html)
      t.match(text, /^Sign-in did not work /, `${reason}: the heading`)
      t.match(text, says, `${reason}: ${family}`)
      t.match(page.html, `<small>For support: <code>${reason}</code> (403)</small>`, `${reason}: the code, small`)
      t.match(page.html, '<a href="/login">Back to the sign-in page</a>', `${reason}: the way back`)
    }
  }
  t.notMatch(words(refusalPage({ status: 403, code: 'SSO_SIGN_IN_REFUSED', reason: 'not_a_member' }).html),
    /suspend/i, 'nothing says suspended')
  const others: Array<[number, string, RegExp]> = [
    [404, 'SSO_CONNECTION_NOT_FOUND', /does not sign in with single sign-on here.*sign-in link by e-mail/],
    [400, 'VALIDATION_FAILED', /incomplete or damaged/],
    [401, 'UNAUTHENTICATED', /Sign in as a workspace admin/],
    [403, 'FORBIDDEN', /Only a workspace admin can test/],
    [429, 'RATE_LIMITED', /too many sign-in attempts/],
    [502, 'UPSTREAM_FAILED', /not working right now/],
    [503, 'SERVICE_UNAVAILABLE', /busy right now/],
    [500, 'INTERNAL_ERROR', /Something went wrong on our side/]
  ]
  for (const [status, code, says] of others) {
    t.match(refusalWords({ status, code }), says, `${status} ${code}`)
    t.match(refusalPage({ status, code }).html, `<code>${code}</code> (${status})`)
  }
  const page = refusalPage({ status: 403, code: 'SSO_SIGN_IN_REFUSED', reason: 'bad_signature' })
  t.match(page.headers, { 'cache-control': 'no-store', 'content-security-policy': /script-src 'nonce-/ },
    'the shell\'s headers: no-store, the CSP')
  t.notMatch(page.html, /<script/, 'no script')
})

t.test('every value is escaped: a reason and a test sign-in\'s claims', async t => {
  const evil = '<img src=x onerror="alert(1)">&\'"'
  const refused = refusalPage({ status: 403, code: 'SSO_SIGN_IN_REFUSED', reason: evil }).html
  t.notMatch(refused, '<img', 'the reason')
  t.match(refused, '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;&quot;')
  const html = testSignInPage({
    connectionId: '5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d',
    protocol: 'saml',
    issuer: `https://idp.test/${evil}`,
    subject: evil,
    email: `${evil}@x.test`,
    emailVerified: false,
    claims: { [evil]: [evil, 'second'] }
  }).html
  t.notMatch(html, '<img', 'issuer, subject, e-mail and claims')
  t.equal(html.split('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&#39;&quot;').length - 1, 5, 'all five, escaped')
  const text = words(html)
  t.match(text, /^Test sign-in succeeded — nobody was signed in /)
  t.match(text, 'Connection 5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d (SAML 2.0)')
  t.match(text, 'E-mail verified No')
  t.match(text, `Claims ${evil} ${evil} second`)
  t.match(words(testSignInPage({
    connectionId: '5e7a9c1b-3d2f-4a6b-8c9d-0e1f2a3b4c5d',
    protocol: 'oidc',
    issuer: 'https://i.test',
    subject: 's',
    email: null,
    emailVerified: false,
    claims: {}
  }).html), 'E-mail none stated E-mail verified No Claims No other claims were received.')
})

// Over HTTP: OpenID Connect against oidc-provider on loopback, SAML with the in-process IdP.

const CALLBACK = `${PUBLIC_URL}/api/oauth/sso/callback`
const ACME = 'acme-pages.test'
const SAML_DOMAIN = 'globex-pages.test'
const idp = await startOidcProvider(t, {
  redirectUris: [CALLBACK],
  profiles: [{
    name: 'okta',
    kind: 'okta',
    accounts: {
      alice: { email: `alice@${ACME}`, email_verified: true, name: 'Alice' },
      bob: { email: `bob@${ACME}`, email_verified: false },
      sam: { email: `sam@${ACME}`, email_verified: true },
      dora: { email: `dora@${ACME}`, email_verified: true },
      mallory: { email: `mallory@${ACME}`, email_verified: true, name: '<script>alert("name")</script>' }
    }
  }]
})
const h = await build(t, { clock: new RealTimeClock(), env: { PUBLIC_URL, ENCRYPTION_KEY, AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })
const admin = await h.signIn({ workspaceName: 'Acme Pages' })
await verifiedDomain(h, admin.workspaceId, ACME)
const okta = idp.profile('okta')
const connectionId = await createConnection(h, admin, {
  name: 'Okta',
  protocol: 'oidc',
  domains: [ACME],
  oidc: { issuer: okta.issuer, clientId: okta.clientId, clientSecret: okta.clientSecret }
})

type Accept = string | undefined
async function get (url: string, accept: Accept, cookie?: string): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {}
  if (accept !== undefined) headers.accept = accept
  if (cookie !== undefined) headers.cookie = cookie
  const res = await h.inject({ method: 'GET', url, headers })
  assertContract(t, 'GET', url.split('?')[0] ?? url, res)
  return res
}

/** Up to the provider's redirect back: the callback's path and query, and this browser's state cookie. */
async function toCallback (login: string, start = `/api/oauth/sso?email=${login}@${ACME}`, cookie?: string) {
  const res = await get(start, BROWSER, cookie)
  if (res.statusCode !== 302) throw new Error(`start: ${res.statusCode} ${res.body}`)
  const state = cookieOf(res, 'sso_state') as string
  const back = await idp.signIn(res.headers.location as string, login)
  return { url: back.pathname + back.search, cookie: `sso_state=${state}`, state }
}

/** A browser's answer: the status, an HTML page of the shell with no-store, and its words. */
function isPage (t: Test, res: LightMyRequestResponse, status: number, says: RegExp | string): string {
  t.equal(res.statusCode, status, `${status}`)
  t.equal(res.headers['content-type'], 'text/html; charset=utf-8', 'text/html')
  t.equal(res.headers['cache-control'], 'no-store', 'no-store')
  t.match(res.headers['content-security-policy'], /default-src 'none'/, 'the page shell\'s CSP')
  const text = words(res.body)
  t.match(text, says)
  return text
}

/** An API client's answer: exactly today's JSON ErrorResponse. */
function isJson (t: Test, res: LightMyRequestResponse, status: number, body: Record<string, unknown>): void {
  t.equal(res.statusCode, status)
  t.equal(res.headers['content-type'], 'application/json; charset=utf-8')
  t.equal(res.body, JSON.stringify(body), 'the JSON, byte for byte')
}

const REFUSED = 'Single sign-on did not sign you in. Start again, or ask your workspace admin.'
const refusedBody = (reason: string) => ({ message: REFUSED, code: 'SSO_SIGN_IN_REFUSED', details: { reason } })

t.test('the start: no connection, no address, a test by a stranger or a member', async t => {
  const unknown = '/api/oauth/sso?email=ada@unknown-domain.test'
  isPage(t, await get(unknown, BROWSER), 404, /does not sign in with single sign-on here/)
  const notFound = {
    message: 'No single sign-on connection serves this address. Sign in with an e-mailed link.',
    code: 'SSO_CONNECTION_NOT_FOUND'
  }
  for (const accept of ['application/json', undefined, '*/*', 'text/html, application/json']) {
    isJson(t, await get(unknown, accept), 404, notFound)
  }
  isPage(t, await get('/api/oauth/sso', BROWSER), 400, /incomplete or damaged.*VALIDATION_FAILED/)
  const test = `/api/oauth/sso?connection=${connectionId}`
  isPage(t, await get(test, BROWSER), 401, /Sign in as a workspace admin.*UNAUTHENTICATED/)
  isJson(t, await get(test, 'application/json'), 401, { message: 'Authentication required', code: 'UNAUTHENTICATED' })
  const member = await h.signIn({ workspaceId: admin.workspaceId, role: 'member' })
  isPage(t, await get(test, BROWSER, member.cookie), 403, /Only a workspace admin can test/)
  isPage(t, await get(test, BROWSER, (await h.signIn()).cookie), 404, /not one of your workspace's/)
  // The provider's discovery unreachable: 502, in words.
  const down = await h.signIn({ workspaceName: 'Down' })
  await verifiedDomain(h, down.workspaceId, 'down-pages.test')
  await createConnection(h, down, {
    name: 'Down',
    protocol: 'oidc',
    domains: ['down-pages.test'],
    oidc: { issuer: `${okta.issuer}/nowhere`, clientId: 'c', clientSecret: 's' }
  })
  const text = isPage(t, await get('/api/oauth/sso?email=x@down-pages.test', BROWSER), 502, /not working right now/)
  t.notMatch(text, /did not answer as expected/, 'not the JSON message')
})

t.test('the OIDC callback: each refusal family in words, JSON unchanged for API clients', async t => {
  const stranger = await toCallback('sam')
  const strangerText = isPage(t, await get(stranger.url, BROWSER, stranger.cookie), 403,
    /Ask your workspace admin to invite you.*not_a_member \(403\)/)
  t.same(await refusals(h, connectionId), ['not_a_member'], 'refused and audited as before')
  const again = await toCallback('sam')
  isJson(t, await get(again.url, 'application/json', again.cookie), 403, refusedBody('not_a_member'))
  const noAccept = await toCallback('sam')
  isJson(t, await get(noAccept.url, undefined, noAccept.cookie), 403, refusedBody('not_a_member'))

  // A suspended member reads exactly what a stranger reads.
  const dora = await h.signIn({ workspaceId: admin.workspaceId, email: `dora@${ACME}`, role: 'member' })
  await h.db.query('UPDATE users SET status = \'suspended\', suspended_by = \'admin\', suspended_at = now() WHERE id = $1', [dora.userId])
  const suspended = await toCallback('dora')
  const suspendedText = isPage(t, await get(suspended.url, BROWSER, suspended.cookie), 403, /invite you/)
  t.equal(suspendedText, strangerText, 'the same words as a stranger')
  t.equal((await refusals(h, connectionId)).at(-1), 'suspended', 'the audit line still says why')

  const bob = await toCallback('bob')
  isPage(t, await get(bob.url, BROWSER, bob.cookie), 403, /invite you.*email_not_verified/)

  // The state: none (another browser), then a replay.
  const other = await toCallback('alice')
  isPage(t, await get(other.url, BROWSER), 403, /start again.*state_mismatch/)
  await h.signIn({ workspaceId: admin.workspaceId, email: `alice@${ACME}`, role: 'member' })
  const once = await toCallback('alice')
  t.equal((await get(once.url, BROWSER, once.cookie)).statusCode, 302, 'the genuine callback still signs in')
  isPage(t, await get(once.url, BROWSER, once.cookie), 403, /start again.*state_replayed/)

  // A forged ID token: could not be verified. Nothing of the provider's message is shown.
  const forged = await toCallback('alice')
  idp.tamperNextIdToken('okta', async claims => await idp.sign('okta', { ...claims, aud: 'another-client' }))
  const text = isPage(t, await get(forged.url, BROWSER, forged.cookie), 403, /could not be verified.*audience_mismatch/)
  t.notMatch(text, /another-client|unexpected|claim|jwt/i, 'no library or provider text')

  // The person cancelled at the provider (its `error` and `error_description`, which are not shown).
  const cancelled = await toCallback('alice')
  const query = new URLSearchParams({
    error: 'access_denied', error_description: '<b>Denied</b> by policy', state: cancelled.state, iss: okta.issuer
  })
  const res = await get(`/api/oauth/sso/callback?${query.toString()}`, BROWSER, cancelled.cookie)
  const said = isPage(t, res, 403, /did not complete the sign-in.*provider_error/)
  t.notMatch(said, /Denied|policy|access_denied/, 'the provider\'s words are not echoed')
  t.notMatch(res.body, /<b>/)
})

t.test('an admin\'s test sign-in: the claims as a page, escaped; JSON for API clients', async t => {
  const start = `/api/oauth/sso?connection=${connectionId}`
  const test = await toCallback('mallory', start, admin.cookie)
  const res = await get(test.url, BROWSER, test.cookie)
  const text = isPage(t, res, 200, /^Test sign-in succeeded — nobody was signed in /)
  t.match(text, `Connection ${connectionId} (OpenID Connect)`)
  t.match(text, `Issuer ${okta.issuer}`)
  t.match(text, 'Subject mallory')
  t.match(text, `E-mail mallory@${ACME}`)
  t.match(text, 'E-mail verified Yes')
  t.match(text, 'Claims name <script>alert("name")</script>', 'the claim, as text')
  t.notMatch(res.body, '<script>alert', 'never as markup')
  t.equal(cookieOf(res, 'service_session'), undefined, 'nobody signed in')
  const json = await toCallback('mallory', start, admin.cookie)
  const answer = await get(json.url, 'application/json', json.cookie)
  t.equal(answer.statusCode, 200)
  t.equal(answer.body, JSON.stringify({
    connectionId,
    protocol: 'oidc',
    issuer: okta.issuer,
    subject: 'mallory',
    email: `mallory@${ACME}`,
    emailVerified: true,
    claims: { name: ['<script>alert("name")</script>'] }
  }), 'the JSON, byte for byte')
})

t.test('the SAML ACS: a refusal, an unknown connection and a test sign-in, for a browser and an API client', async t => {
  const globex = await h.signIn({ workspaceName: 'Globex Pages' })
  await verifiedDomain(h, globex.workspaceId, SAML_DOMAIN)
  const keys = await makeKeyPair(t)
  const saml = createTestIdp({ entityId: 'https://idp.globex-pages.test/saml', keys, ssoUrl: 'https://idp.globex-pages.test/sso' })
  const samlId = await createConnection(h, globex, {
    name: 'Globex IdP',
    protocol: 'saml',
    domains: [SAML_DOMAIN],
    saml: { idpMetadataXml: saml.metadata(), idpCertificates: [keys.certificate] }
  })
  const endpoints = samlEndpoints(PUBLIC_URL, samlId)
  const sp = { entityId: endpoints.spEntityId, acsUrl: endpoints.acsUrl }
  const post = async (id: string, form: Record<string, string>, accept: Accept, state?: string) => {
    const url = `/api/sso/connections/${id}/saml/acs`
    const headers: Record<string, string> = {
      'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site'
    }
    if (accept !== undefined) headers.accept = accept
    if (state !== undefined) headers.cookie = `sso_saml_state=${state}`
    const res = await h.inject({ method: 'POST', url, headers, payload: new URLSearchParams(form).toString() })
    assertContract(t, 'POST', url, res)
    return res
  }
  // No state cookie: the sign-in was not started in this browser.
  isPage(t, await post(samlId, { SAMLResponse: 'PHg+' }, BROWSER), 403, /start again.*state_mismatch/)
  isJson(t, await post(samlId, { SAMLResponse: 'PHg+' }, 'application/json'), 403, refusedBody('state_mismatch'))
  isJson(t, await post(samlId, { SAMLResponse: 'PHg+' }, undefined), 403, refusedBody('state_mismatch'))
  const nobody = '00000000-0000-4000-8000-000000000000'
  isPage(t, await post(nobody, { SAMLResponse: 'PHg+' }, BROWSER), 404, /does not sign in with single sign-on here/)

  // A test sign-in through the IdP: its page.
  const started = await get(`/api/oauth/sso?connection=${samlId}`, BROWSER, globex.cookie)
  const state = cookieOf(started, 'sso_saml_state') as string
  const location = started.headers.location as string
  const SAMLResponse = await saml.loginResponse({
    sp,
    requestId: await saml.requestIdOf(location, sp),
    nameId: 'u-<grace>',
    attributes: { email: `grace@${SAML_DOMAIN}`, displayName: 'Grace & <Co>' },
    now: h.clock.now()
  })
  const relayState = new URL(location).searchParams.get('RelayState') ?? ''
  const res = await post(samlId, { SAMLResponse, RelayState: relayState }, BROWSER, state)
  const text = isPage(t, res, 200, /^Test sign-in succeeded — nobody was signed in /)
  t.match(text, `Connection ${samlId} (SAML 2.0)`)
  t.match(text, 'Subject u-<grace>')
  t.match(text, 'displayName Grace & <Co>')
  t.match(res.body, 'u-&lt;grace&gt;', 'escaped')
  t.notMatch(res.body, '<grace>')
})

t.test('an outage: the database down (503) and an internal error (500), in words, nothing of the cause', async t => {
  const service = h.app.services.ssoSignIn
  const startByEmail = service.startByEmail
  t.teardown(() => { service.startByEmail = startByEmail })
  const url = `/api/oauth/sso?email=alice@${ACME}`

  service.startByEmail = async () => { throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }) }
  const down = await get(url, BROWSER)
  const text = isPage(t, down, 503, /busy right now.*SERVICE_UNAVAILABLE \(503\)/)
  t.equal(down.headers['retry-after'], '5', 'Retry-After, as the JSON answer has it')
  t.notMatch(text, /ECONNREFUSED|10\.0\.0\.7|database/)
  isJson(t, await get(url, 'application/json'), 503, {
    message: 'The service is unavailable: the database does not answer; retry shortly', code: 'SERVICE_UNAVAILABLE'
  })

  service.startByEmail = async () => { throw new Error('secret internal detail') }
  const failed = await get(url, BROWSER)
  t.notMatch(isPage(t, failed, 500, /Something went wrong on our side.*INTERNAL_ERROR \(500\)/), /secret/)
  isJson(t, await get(url, undefined), 500, { message: 'Internal server error', code: 'INTERNAL_ERROR' })
})
