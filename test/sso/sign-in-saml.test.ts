import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { openDatabase } from '../../src/db/client.js'
import { samlEndpoints } from '../../src/sso/connection-context.js'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createTestIdp, makeKeyPair, type ServiceProviderRef } from '../helpers/saml-idp.js'
import {
  cookieOf, createConnection, ENCRYPTION_KEY, PUBLIC_URL, RealTimeClock, refusals, refused, verifiedDomain, writes
} from '../helpers/sso-sign-in.js'

// Sign-in through a workspace's SAML connection (issue 53, items 2 and 4), over HTTP with samlify
// as the IdP: GET /api/oauth/sso?email= → the IdP's redirect endpoint; the IdP's page posts the
// signed response to the connection's ACS URL, from its own site. Who signs in, the test
// sign-in, and each refusal with nothing signed in and only its audit line written — a response
// replayed through a second instance on the same database included.

const ACME = 'saml-acme.test'
const GLOBEX = 'saml-globex.test'
const ENV = { PUBLIC_URL, ENCRYPTION_KEY, AUTH_RATE_LIMIT_PER_MINUTE: '1000' }
const h = await build(t, { clock: new RealTimeClock(), env: ENV })

const keys = await makeKeyPair(t)
const idp = createTestIdp({ entityId: 'https://idp.saml-acme.test/saml', keys, ssoUrl: 'https://idp.saml-acme.test/sso' })

async function workspace (domain: string, over: Record<string, unknown> = {}) {
  const admin = await h.signIn({ workspaceName: domain })
  await verifiedDomain(h, admin.workspaceId, domain)
  const connectionId = await createConnection(h, admin, {
    name: 'Company IdP',
    protocol: 'saml',
    domains: [domain],
    saml: {
      idpMetadataXml: idp.metadata(),
      idpCertificates: [keys.certificate],
      idpEntityId: idp.entityId,
      idpSsoUrl: 'https://idp.saml-acme.test/sso'
    },
    ...over
  })
  const sp = samlEndpoints(PUBLIC_URL, connectionId)
  return { admin, connectionId, sp: { entityId: sp.spEntityId, acsUrl: sp.acsUrl } satisfies ServiceProviderRef }
}

const acme = await workspace(ACME)
const globex = await workspace(GLOBEX, { accounts: 'create', defaultRole: 'member' })

async function get (url: string, cookie?: string): Promise<LightMyRequestResponse> {
  const res = await h.inject({ method: 'GET', url, headers: cookie === undefined ? {} : { cookie } })
  assertContract(t, 'GET', url.split('?')[0] ?? url, res)
  return res
}

interface Started { state: string, requestId: string, relayState: string }

/** The start: this browser's cookie, and the request the IdP reads. */
async function start (url: string, sp: ServiceProviderRef, cookie?: string): Promise<Started> {
  const res = await get(url, cookie)
  if (res.statusCode !== 302) throw new Error(`start: ${res.statusCode} ${res.body}`)
  const state = cookieOf(res, 'sso_saml_state')
  if (state === undefined) throw new Error('no state cookie')
  const location = res.headers.location as string
  return {
    state,
    requestId: await idp.requestIdOf(location, sp),
    relayState: new URL(location).searchParams.get('RelayState') ?? ''
  }
}

/** The IdP's page posting to the ACS URL, from its own site. */
async function post (
  app: TestApp, connectionId: string, form: { SAMLResponse: string, RelayState?: string }, state?: string
): Promise<LightMyRequestResponse> {
  const url = `/api/sso/connections/${connectionId}/saml/acs`
  const res = await app.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'sec-fetch-site': 'cross-site',
      origin: 'https://idp.saml-acme.test',
      ...(state === undefined ? {} : { cookie: `sso_saml_state=${state}` })
    },
    payload: new URLSearchParams(form).toString()
  })
  assertContract(t, 'POST', url, res)
  return res
}

type Attributes = Record<string, string>
const login = (w: typeof acme, s: Started, nameId: string, email: string, attributes: Attributes = {}) =>
  idp.loginResponse({
    sp: w.sp, requestId: s.requestId, nameId, attributes: { email, ...attributes }, now: h.clock.now()
  })

async function signIn (w: typeof acme, nameId: string, email: string, app: TestApp = h, startWith = email) {
  const s = await start(`/api/oauth/sso?email=${encodeURIComponent(startWith)}`, w.sp)
  const SAMLResponse = await login(w, s, nameId, email)
  return { res: await post(app, w.connectionId, { SAMLResponse, RelayState: s.relayState }, s.state), s, SAMLResponse }
}

async function me (res: LightMyRequestResponse) {
  const r = await get('/api/users/me', `service_session=${cookieOf(res, 'service_session') ?? ''}`)
  return r.json() as { user: { id: string, email: string, role: string }, workspace: { id: string } }
}

t.test('the start, the SP metadata, and the cookie that survives the IdP\'s cross-site POST', async t => {
  const res = await get(`/api/oauth/sso?email=ada@${ACME}`)
  t.equal(res.statusCode, 302)
  const location = new URL(res.headers.location as string)
  t.equal(location.origin + location.pathname, 'https://idp.saml-acme.test/sso')
  t.ok(location.searchParams.has('SAMLRequest'))
  const cookie = res.cookies.find(c => c.name === 'sso_saml_state')
  t.match(cookie, {
    httpOnly: true, secure: true, sameSite: 'None', path: `/api/sso/connections/${acme.connectionId}/saml/acs`
  })
  t.equal(location.searchParams.get('RelayState'), cookie?.value)

  const metadata = await get(`/api/sso/connections/${acme.connectionId}/saml/metadata`)
  t.equal(metadata.statusCode, 200)
  t.match(metadata.headers['content-type'], /^application\/samlmetadata\+xml/)
  t.match(metadata.body, acme.sp.acsUrl)
  t.equal((await get('/api/sso/connections/00000000-0000-4000-8000-000000000000/saml/metadata')).statusCode, 404)
})

t.test('an existing member is linked, then signed in by the NameID whatever the address', async t => {
  const ada = await h.signIn({ workspaceId: acme.admin.workspaceId, email: `ada@${ACME}`, role: 'member' })
  const { res } = await signIn(acme, 'u-ada', `ada@${ACME}`)
  t.equal(res.statusCode, 302, res.body)
  t.equal((await me(res)).user.id, ada.userId)
  const again = await signIn(acme, 'u-ada', `ada.lovelace@${ACME}`)
  t.equal(again.res.statusCode, 302, again.res.body)
  t.equal((await me(again.res)).user.id, ada.userId, 'the identity, not the address')
})

t.test('accounts: create makes a member at the first sign-in', async t => {
  const { res } = await signIn(globex, 'u-gus', `gus@${GLOBEX}`)
  t.equal(res.statusCode, 302, res.body)
  t.match(await me(res), { user: { email: `gus@${GLOBEX}`, role: 'member' }, workspace: { id: globex.admin.workspaceId } })
})

t.test('a test sign-in shows the assertion and signs no one in', async t => {
  const s = await start(`/api/oauth/sso?connection=${acme.connectionId}`, acme.sp, acme.admin.cookie)
  const before = await writes(h)
  const SAMLResponse = await login(acme, s, 'u-nobody', `nobody@${ACME}`, { displayName: 'No Body' })
  const res = await post(h, acme.connectionId, { SAMLResponse, RelayState: s.relayState }, s.state)
  t.equal(res.statusCode, 200, res.body)
  t.match(res.json(), {
    connectionId: acme.connectionId,
    protocol: 'saml',
    issuer: idp.entityId,
    subject: 'u-nobody',
    email: `nobody@${ACME}`,
    claims: { displayName: ['No Body'] }
  })
  t.equal(cookieOf(res, 'service_session'), undefined)
  t.same(await writes(h), before)
})

t.test('refusals: nothing signed in, only an audit line', async t => {
  const id = acme.connectionId
  await refused(t, h, id, 'not_a_member', 'not_a_member', async () => (await signIn(acme, 'u-sam', `sam@${ACME}`)).res)
  await refused(t, h, id, 'domain_not_served', 'domain_not_served',
    async () => (await signIn(acme, 'u-eve', 'eve@elsewhere.test', h, `eve@${ACME}`)).res)
  const dora = await h.signIn({ workspaceId: acme.admin.workspaceId, email: `dora@${ACME}`, role: 'member' })
  await h.db.query(
    'UPDATE users SET status = \'suspended\', suspended_by = \'admin\', suspended_at = now() WHERE id = $1', [dora.userId])
  await refused(t, h, id, 'suspended', 'not_a_member', async () => (await signIn(acme, 'u-dora', `dora@${ACME}`)).res)

  const ada = `ada@${ACME}`
  // Another browser's cookie, or none.
  const mine = await start(`/api/oauth/sso?email=${ada}`, acme.sp)
  const theirs = await start(`/api/oauth/sso?email=${ada}`, acme.sp)
  const response = await login(acme, mine, 'u-ada', ada)
  await refused(t, h, id, 'state_mismatch', 'state_mismatch',
    async () => await post(h, id, { SAMLResponse: response, RelayState: mine.relayState }, theirs.state))
  await refused(t, h, id, 'state_mismatch', 'state_mismatch', async () => await post(h, id, { SAMLResponse: response }))
  // A response to another request, posted with this browser's cookie.
  await refused(t, h, id, 'in_response_to_mismatch', 'in_response_to_mismatch',
    async () => await post(h, id, { SAMLResponse: response }, theirs.state))
  // Altered after signing: the address in the signed assertion changed.
  const altered = Buffer.from(
    Buffer.from(response, 'base64').toString('utf8').replaceAll(ada, `sam@${ACME}`)).toString('base64')
  await refused(t, h, id, 'bad_signature', 'bad_signature', async () => await post(h, id, { SAMLResponse: altered }, mine.state))
  // The genuine one signs in, once; presented again with the same cookie it is a replay.
  t.equal((await post(h, id, { SAMLResponse: response }, mine.state)).statusCode, 302)
  await refused(t, h, id, 'replayed', 'replayed', async () => await post(h, id, { SAMLResponse: response }, mine.state))
})

t.test('a domain that lost its verification is no longer served: its addresses are not linked', async t => {
  const w = await workspace('saml-umbrella.test')
  await verifiedDomain(h, w.admin.workspaceId, 'saml-umbrella-eu.test')
  const patched = await h.inject({
    method: 'PATCH',
    url: `/api/sso/connections/${w.connectionId}`,
    headers: { cookie: w.admin.cookie },
    payload: { domains: ['saml-umbrella.test', 'saml-umbrella-eu.test'] }
  })
  t.equal(patched.statusCode, 200, patched.body)
  await h.signIn({ workspaceId: w.admin.workspaceId, email: 'kim@saml-umbrella-eu.test', role: 'member' })
  await h.db.query('UPDATE workspace_domains SET status = \'failed\' WHERE domain = $1', ['saml-umbrella-eu.test'])
  await refused(t, h, w.connectionId, 'domain_not_served', 'domain_not_served',
    async () => (await signIn(w, 'u-kim', 'kim@saml-umbrella-eu.test', h, 'ann@saml-umbrella.test')).res)
  t.same((await h.inject({ method: 'GET', url: `/api/sso/connections/${w.connectionId}`, headers: { cookie: w.admin.cookie } }))
    .json().domains, ['saml-umbrella.test'], 'the view serves the verified one alone')
})

t.test('IdP-initiated sign-in: refused by default; allowed, a fresh SP-initiated sign-in, never the response itself', async t => {
  const w = await workspace('saml-initech.test')
  const id = w.connectionId
  const zoe = await h.signIn({ workspaceId: w.admin.workspaceId, email: 'zoe@saml-initech.test', role: 'member' })
  const tile = async () => await idp.loginResponse({
    sp: w.sp, requestId: null, nameId: 'u-zoe', attributes: { email: 'zoe@saml-initech.test' }, now: h.clock.now()
  })
  // Off (the default): the tile's unsolicited response is refused, with or without a sign-in of this browser under way.
  await refused(t, h, id, 'state_mismatch', 'state_mismatch', async () => await post(h, id, { SAMLResponse: await tile() }))
  const underWay = await start('/api/oauth/sso?email=zoe@saml-initech.test', w.sp)
  await refused(t, h, id, 'unsolicited', 'unsolicited',
    async () => await post(h, id, { SAMLResponse: await tile() }, underWay.state))

  const patched = await h.inject({
    method: 'PATCH', url: `/api/sso/connections/${id}`, headers: { cookie: w.admin.cookie }, payload: { saml: { idpInitiated: true } }
  })
  assertContract(t, 'PATCH', '/api/sso/connections/{connectionId}', patched)
  t.equal(patched.json().saml.idpInitiated, true, 'the view says it')
  for (const state of [undefined, underWay.state]) {
    const before = await writes(h)
    const res = await post(h, id, { SAMLResponse: await tile() }, state)
    t.equal(res.statusCode, 302, `${state === undefined ? 'no' : 'an earlier'} sign-in under way: 302 (${res.body})`)
    const location = new URL(res.headers.location as string)
    t.equal(location.origin + location.pathname, 'https://idp.saml-acme.test/sso', 'to the provider')
    t.equal(res.cookies.some(c => c.name === 'service_session' && c.value !== ''), false, 'no one signed in by the tile')
    t.same(await writes(h), before, 'nothing written but the new sign-in\'s state')
    const fresh = res.cookies.filter(c => c.name === 'sso_saml_state').at(-1)?.value ?? ''
    t.equal(location.searchParams.get('RelayState'), fresh, 'the fresh state in the cookie and RelayState')
    // The provider answers the fresh request at once: that response signs in.
    const requestId = await idp.requestIdOf(location.href, w.sp)
    const SAMLResponse = await idp.loginResponse({
      sp: w.sp, requestId, nameId: 'u-zoe', attributes: { email: 'zoe@saml-initech.test' }, now: h.clock.now()
    })
    const signed = await post(h, id, { SAMLResponse, RelayState: fresh }, fresh)
    t.equal(signed.statusCode, 302, signed.body)
    t.equal((await me(signed)).user.id, zoe.userId, 'signed in by the answer to our own request')
  }
})

t.test('a response replayed through a second instance on the same database is refused', async t => {
  const url = (h.db as { url?: string }).url
  // On PostgreSQL another pool, as another process would have; on PGlite the one database.
  const db = url === undefined ? h.db : await openDatabase({ url, dataDir: null })
  if (url !== undefined) t.teardown(async () => { await db.close() })
  const second = await build(t, { db, clock: h.clock, env: ENV })
  const { res, s, SAMLResponse } = await signIn(acme, 'u-ada', `ada@${ACME}`)
  t.equal(res.statusCode, 302, res.body)
  await refused(t, h, acme.connectionId, 'replayed', 'replayed',
    async () => await post(second, acme.connectionId, { SAMLResponse, RelayState: s.relayState }, s.state))
  t.ok((await refusals(h, acme.connectionId)).includes('replayed'))
})
