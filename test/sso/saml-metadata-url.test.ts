import t from 'tap'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import type { LightMyRequestResponse } from 'fastify'
import { openDatabase } from '../../src/db/client.js'
import { loggerOptions } from '../../src/logger.js'
import { samlEndpoints } from '../../src/sso/connection-context.js'
import { fetchIdpMetadata, MetadataUnavailable } from '../../src/sso/saml-metadata-fetch.js'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { buildStaging, fixedLookup } from '../helpers/staging.js'
import { startFakeHttp, type FakeHttp } from '../helpers/fake-http.js'
import { createTestIdp, makeKeyPair, type ServiceProviderRef, type TestIdp } from '../helpers/saml-idp.js'
import {
  cookieOf, createConnection, ENCRYPTION_KEY, PUBLIC_URL, RealTimeClock, refused, verifiedDomain
} from '../helpers/sso-sign-in.js'

// A SAML connection by its IdP's metadata URL alone (issue 53, item 1): the metadata is fetched
// when the connection is saved (a URL that does not serve metadata is refused in words), then at
// sign-in once a cache period (an hour) on the service's clock, not per sign-in; a failed refresh
// leaves the last good copy serving for a day, logged; a peer that never answers is bounded by the
// deadline; the connection's pinned certificates alone verify responses, whatever the metadata lists.

const HOUR = 60 * 60_000
const DAY = 24 * HOUR
const ENV = { PUBLIC_URL, ENCRYPTION_KEY, AUTH_RATE_LIMIT_PER_MINUTE: '1000' }
let logs = ''
const stream = new Writable({ write (chunk, _encoding, done) { logs += String(chunk); done() } })
const h = await build(t, { clock: new RealTimeClock(), env: ENV, logger: { ...loggerOptions('warn'), stream } })

const IDP = 'https://idp.metadata-url.test/saml'
const SSO = 'https://idp.metadata-url.test/sso'
const keys = await makeKeyPair(t)
const attackerKeys = await makeKeyPair(t, 'attacker')
const idp = createTestIdp({ entityId: IDP, keys, ssoUrl: SSO })
const LOOPBACK = { allowHosts: ['127.0.0.1'], allowHttp: true }

type Reply = Awaited<ReturnType<Parameters<FakeHttp['on']>[1]>>
const metadataOf = (of: TestIdp = idp): Reply =>
  ({ text: of.metadata(), headers: { 'content-type': 'application/samlmetadata+xml' } })

/** The IdP's metadata on loopback; what GET /metadata answers is the test's to change. */
async function metadataServer (first: () => Reply = () => metadataOf()) {
  const fake = await startFakeHttp(t)
  let answer = first
  fake.on('GET /metadata', () => answer())
  return {
    url: `${fake.url}/metadata`,
    fetched: () => fake.requests.filter(r => r.path === '/metadata').length,
    answer: (next: () => Reply) => { answer = next }
  }
}

async function saveConnection (admin: SignedIn, body: Record<string, unknown>, method = 'POST', id = '') {
  const url = `/api/sso/connections${id === '' ? '' : `/${id}`}`
  const res = await h.inject({
    method: method as 'POST' | 'PATCH', url, headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: JSON.stringify(body)
  })
  assertContract(t, method, id === '' ? url : '/api/sso/connections/{connectionId}', res)
  return res
}

const samlBody = (metadataUrl: string, over: Record<string, unknown> = {}) => ({
  name: 'Company IdP', protocol: 'saml', saml: { idpMetadataUrl: metadataUrl, idpCertificates: [keys.certificate] }, ...over
})

async function workspace (domain: string, metadataUrl: string, over: Record<string, unknown> = {}) {
  const admin = await h.signIn({ workspaceName: domain })
  await verifiedDomain(h, admin.workspaceId, domain)
  const connectionId = await createConnection(h, admin, samlBody(metadataUrl, { domains: [domain], ...over }))
  const sp = samlEndpoints(PUBLIC_URL, connectionId)
  return { admin, connectionId, sp: { entityId: sp.spEntityId, acsUrl: sp.acsUrl } satisfies ServiceProviderRef }
}
type Workspace = Awaited<ReturnType<typeof workspace>>

async function startFor (email: string): Promise<LightMyRequestResponse> {
  const url = `/api/oauth/sso?email=${encodeURIComponent(email)}`
  const res = await h.inject({ method: 'GET', url })
  assertContract(t, 'GET', '/api/oauth/sso', res)
  return res
}

/** Start, the IdP (`signer`) answering the request, the POST to the ACS URL (of `acs`) with this browser's cookie. */
async function signIn (w: Workspace, nameId: string, email: string, signer: TestIdp = idp, acs: TestApp = h) {
  const started = await startFor(email)
  if (started.statusCode !== 302) throw new Error(`start: ${started.statusCode} ${started.body}`)
  const location = new URL(started.headers.location as string)
  const state = cookieOf(started, 'sso_saml_state') ?? ''
  const requestId = await signer.requestIdOf(location.href, w.sp)
  const SAMLResponse = await signer.loginResponse({
    sp: w.sp, requestId, nameId, attributes: { email }, now: h.clock.now()
  })
  const url = `/api/sso/connections/${w.connectionId}/saml/acs`
  const res = await acs.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'cross-site', cookie: `sso_saml_state=${state}` },
    payload: new URLSearchParams({ SAMLResponse, RelayState: location.searchParams.get('RelayState') ?? '' }).toString()
  })
  assertContract(t, 'POST', '/api/sso/connections/{connectionId}/saml/acs', res)
  return { res, location }
}

async function signedInAs (res: LightMyRequestResponse, app: TestApp = h): Promise<string> {
  const me = await app.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: `service_session=${cookieOf(res, 'service_session') ?? ''}` } })
  return (me.json() as { user: { id: string } }).user.id
}

t.test('only a metadata URL: people sign in; the metadata is fetched once a period, not per sign-in', async t => {
  const served = await metadataServer()
  const w = await workspace('meta-acme.test', served.url)
  t.equal(served.fetched(), 1, 'fetched once when the connection was saved')
  const view = await h.inject({ method: 'GET', url: `/api/sso/connections/${w.connectionId}`, headers: { cookie: w.admin.cookie } })
  t.match(view.json().saml, { idpMetadataUrl: served.url, idpMetadataXml: null, idpEntityId: null, idpSsoUrl: null })

  const ada = await h.signIn({ workspaceId: w.admin.workspaceId, email: 'ada@meta-acme.test', role: 'member' })
  for (let i = 0; i < 5; i++) {
    const { res, location } = await signIn(w, 'u-ada', 'ada@meta-acme.test')
    t.equal(location.origin + location.pathname, SSO, `sign-in ${i + 1}: to the metadata's HTTP-Redirect endpoint`)
    t.equal(res.statusCode, 302, res.body)
    t.equal(await signedInAs(res), ada.userId, `sign-in ${i + 1}: signed in, the issuer checked against the metadata's entity ID`)
  }
  t.equal(served.fetched(), 2, 'five sign-ins (start and ACS each) fetched it once')

  h.clock.advance(HOUR - 60_000)
  t.equal((await signIn(w, 'u-ada', 'ada@meta-acme.test')).res.statusCode, 302)
  t.equal(served.fetched(), 2, 'still within the hour: not fetched')
  h.clock.advance(2 * 60_000)
  t.equal((await signIn(w, 'u-ada', 'ada@meta-acme.test')).res.statusCode, 302)
  t.equal(served.fetched(), 3, 'past the hour: fetched again, once')

  // Twenty starts at once past the next period share one fetch.
  h.clock.advance(HOUR + 1000)
  const starts = await Promise.all(Array.from({ length: 20 }, async () => await startFor('ada@meta-acme.test')))
  t.same(new Set(starts.map(s => s.statusCode)), new Set([302]))
  t.equal(served.fetched(), 4, 'twenty concurrent starts, one fetch')
})

t.test('a failed refresh: the last good copy serves for a day, logged; with no good copy the start is refused', async t => {
  const served = await metadataServer()
  const w = await workspace('meta-globex.test', served.url, { accounts: 'create', defaultRole: 'member' })
  t.equal((await signIn(w, 'u-1', 'one@meta-globex.test')).res.statusCode, 302)
  t.equal(served.fetched(), 2)

  served.answer(() => ({ status: 500, text: 'down' }))
  logs = ''
  h.clock.advance(HOUR + 1000)
  const stale = await signIn(w, 'u-2', 'two@meta-globex.test')
  t.equal(stale.res.statusCode, 302, 'signed in with the last good copy')
  t.equal(served.fetched(), 3, 'the refresh was tried')
  t.match(logs, /SAML IdP metadata could not be refreshed: its last good copy serves/)
  t.match(logs, /it answered with status 500/)
  t.match(logs, new RegExp(`"connectionId":"${w.connectionId}"`))
  t.equal((await signIn(w, 'u-3', 'three@meta-globex.test')).res.statusCode, 302)
  t.equal(served.fetched(), 3, 'not tried again within the minute: a sign-in does not wait for a dead IdP each time')
  h.clock.advance(2 * 60_000)
  t.equal((await signIn(w, 'u-4', 'four@meta-globex.test')).res.statusCode, 302)
  t.equal(served.fetched(), 4, 'tried again after it')

  h.clock.advance(DAY)
  logs = ''
  const refusedStart = await startFor('five@meta-globex.test')
  t.equal(refusedStart.statusCode, 502, 'a day old: the copy no longer serves')
  t.match(refusedStart.json(), { code: 'UPSTREAM_FAILED', message: 'The identity provider did not answer as expected. Try again later.' })
  t.match(logs, /SAML IdP metadata could not be read: SSO sign-in refused/)

  served.answer(() => metadataOf())
  t.equal((await signIn(w, 'u-5', 'five@meta-globex.test')).res.statusCode, 302, 'back once the IdP serves it again')

  // A connection whose metadata has never been read at sign-in: nothing to fall back on.
  const other = await metadataServer()
  const fresh = await workspace('meta-initech.test', other.url, { accounts: 'create', defaultRole: 'member' })
  other.answer(() => ({ status: 503, text: 'maintenance' }))
  const noCopy = await startFor('ann@meta-initech.test')
  t.equal(noCopy.statusCode, 502)
  t.match(noCopy.json(), { code: 'UPSTREAM_FAILED' })
  t.notOk((await h.db.query('SELECT 1 FROM sso_flows WHERE connection_id = $1', [fresh.connectionId])).rows.length,
    'no sign-in was started')
})

t.test('the ACS on another instance reads the metadata itself; unreadable there, the response is refused', async t => {
  const url = (h.db as { url?: string }).url
  // On PostgreSQL another pool, as another process would have; on PGlite the one database.
  const db = url === undefined ? h.db : await openDatabase({ url, dataDir: null })
  if (url !== undefined) t.teardown(async () => { await db.close() })
  const second = await build(t, { db, clock: h.clock, env: ENV })
  const served = await metadataServer()
  const w = await workspace('meta-hooli.test', served.url)
  const gil = await h.signIn({ workspaceId: w.admin.workspaceId, email: 'gil@meta-hooli.test', role: 'member' })
  const there = await signIn(w, 'u-gil', 'gil@meta-hooli.test', idp, second)
  t.equal(there.res.statusCode, 302, there.res.body)
  t.equal(await signedInAs(there.res, second), gil.userId, 'started on one instance, finished on the other')
  t.equal(served.fetched(), 3, 'saved, then once by each instance')

  served.answer(() => ({ status: 500, text: 'down' }))
  const third = await build(t, { db, clock: h.clock, env: ENV })
  await refused(t, h, w.connectionId, 'provider_unreachable', 'provider_unreachable',
    async () => (await signIn(w, 'u-gil', 'gil@meta-hooli.test', idp, third)).res)
})

t.test('a peer that never answers is bounded by the deadline, its body too', async t => {
  const silent = await startFakeHttp(t)
  silent.on('GET /metadata', () => ({ hang: true }))
  let began = Date.now()
  const err = await fetchIdpMetadata(`${silent.url}/metadata`, { ...LOOPBACK, timeoutMs: 300 }).catch((e: unknown) => e)
  t.type(err, MetadataUnavailable)
  t.equal((err as MetadataUnavailable).why, 'it did not answer within 0.3 s')
  t.ok(Date.now() - began < 3_000, 'within the deadline')

  // Headers at once, then a body that never ends.
  const trickle = createServer((_req, res) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.write('<md:EntityDescriptor') })
  await new Promise<void>(resolve => trickle.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { trickle.closeAllConnections(); trickle.close() })
  began = Date.now()
  const slow = await fetchIdpMetadata(`http://127.0.0.1:${(trickle.address() as AddressInfo).port}/`, { ...LOOPBACK, timeoutMs: 300 })
    .catch((e: unknown) => e)
  t.equal((slow as MetadataUnavailable).why, 'it did not answer within 0.3 s')
  t.ok(Date.now() - began < 3_000, 'the body within the deadline too')

  // Through the API, with the service's deadline (5 s): the admin is told, in words.
  const admin = await h.signIn()
  began = Date.now()
  const res = await saveConnection(admin, samlBody(`${silent.url}/metadata`))
  const took = Date.now() - began
  t.equal(res.statusCode, 422)
  t.same(res.json(), {
    message: 'The IdP metadata could not be read: it did not answer within 5 s',
    code: 'SSO_METADATA_UNAVAILABLE',
    details: { in: 'body', field: 'saml.idpMetadataUrl' }
  })
  t.ok(took >= 4_500 && took < 8_000, `answered after the deadline, not later (${took} ms)`)
})

t.test('a URL that does not serve one IdP\'s metadata is refused when saved, saying why', async t => {
  const admin = await h.signIn()
  const served = await metadataServer()
  const cases: Array<[string, () => Reply, RegExp]> = [
    ['not found', () => ({ status: 404, text: 'not found' }), /it answered with status 404$/],
    ['a redirect', () => ({ status: 302, text: '', headers: { location: 'https://elsewhere.test/metadata' } }), /a redirect, which is not followed/],
    ['a web page', () => ({ text: '<!doctype html><html><body>Sign in</body></html>', headers: { 'content-type': 'text/html' } }),
      /it is not the SAML metadata of one identity provider$/],
    ['JSON', () => ({ json: { issuer: 'https://idp.example' } }), /it is not the SAML metadata of one identity provider$/],
    ['no HTTP-Redirect endpoint', () => ({ text: idp.metadata().replaceAll('HTTP-Redirect', 'HTTP-POST') }),
      /it names no HTTP-Redirect single sign-on endpoint$/],
    ['over 1 MiB', () => ({ text: idp.metadata().replace('</', `<!--${'x'.repeat(1024 * 1024)}--></`) }), /it is larger than 1 MiB$/]
  ]
  for (const [what, answer, why] of cases) {
    served.answer(answer)
    const res = await saveConnection(admin, samlBody(served.url))
    t.equal(res.statusCode, 422, `${what}: 422`)
    t.match(res.json(), {
      code: 'SSO_METADATA_UNAVAILABLE', message: why, details: { in: 'body', field: 'saml.idpMetadataUrl' }
    }, `${what}: ${String(why)}`)
  }
  t.equal((await h.db.query('SELECT 1 FROM sso_connections WHERE workspace_id = $1', [admin.workspaceId])).rows.length, 0,
    'nothing saved')

  // A change: a new URL is fetched; the same URL sent again is not.
  served.answer(() => metadataOf())
  const made = await saveConnection(admin, samlBody(served.url))
  t.equal(made.statusCode, 201, made.body)
  const id = made.json().id as string
  const broken = await metadataServer(() => ({ status: 404, text: '' }))
  const moved = await saveConnection(admin, { saml: { idpMetadataUrl: broken.url } }, 'PATCH', id)
  t.match(moved.json(), { code: 'SSO_METADATA_UNAVAILABLE', details: { field: 'saml.idpMetadataUrl' } })
  served.answer(() => ({ status: 500, text: 'down' }))
  const before = served.fetched()
  const renamed = await saveConnection(admin, { name: 'Renamed', saml: { idpMetadataUrl: served.url } }, 'PATCH', id)
  t.equal(renamed.statusCode, 200, 'the URL unchanged: not fetched again, so an IdP down does not block other changes')
  t.equal(served.fetched(), before)
})

t.test('the pinned certificate decides: a key the metadata lists signs no one in', async t => {
  // The metadata names the attacker's certificate (a compromised or spoofed metadata host).
  const attacker = createTestIdp({ entityId: IDP, keys: attackerKeys, ssoUrl: SSO })
  const served = await metadataServer(() => metadataOf(attacker))
  const w = await workspace('meta-umbrella.test', served.url)
  const kim = await h.signIn({ workspaceId: w.admin.workspaceId, email: 'kim@meta-umbrella.test', role: 'member' })
  await refused(t, h, w.connectionId, 'wrong_certificate', 'wrong_certificate',
    async () => (await signIn(w, 'u-kim', 'kim@meta-umbrella.test', attacker)).res)
  const genuine = await signIn(w, 'u-kim', 'kim@meta-umbrella.test')
  t.equal(genuine.res.statusCode, 302, 'the pinned key still signs in')
  t.equal(await signedInAs(genuine.res), kim.userId)
})

t.test('outside local: a private address is refused, when saved and at each fetch', async t => {
  const dns = new Map([['idp.corp.test', '10.0.0.5'], ['rebound.test', '169.254.169.254']])
  const lookup = fixedLookup(dns)
  const s = await buildStaging(t, dns)
  const served = await metadataServer()
  const admin = await s.signIn()
  for (const [url, why] of [
    ['https://idp.corp.test/metadata', /10\.0\.0\.5 is not a public address/],
    [served.url, /https/],
    [served.url.replace('http:', 'https:'), /127\.0\.0\.1 is not a public address/]
  ] as const) {
    const res = await s.inject({
      method: 'POST', url: '/api/sso/connections', headers: { cookie: admin.cookie }, payload: samlBody(url)
    })
    t.equal(res.statusCode, 422, `${url} refused`)
    t.match(res.json(), { code: 'SSO_URL_NOT_ALLOWED', message: why, details: { field: 'saml.idpMetadataUrl' } })
  }
  t.equal(served.fetched(), 0, 'never fetched')

  // The fetch checks the address it really connects to: a name that resolves to a private address
  // by then (DNS rebinding) is refused, as is plain http.
  const rebound = await fetchIdpMetadata('https://rebound.test/metadata', { resolve: lookup }).catch((e: unknown) => e)
  t.equal((rebound as MetadataUnavailable).why, 'its address is not allowed (169.254.169.254 is not a public address (linkLocal))')
  const http = await fetchIdpMetadata('http://idp.public.test/metadata', { resolve: lookup }).catch((e: unknown) => e)
  t.equal((http as MetadataUnavailable).why, 'its address is not allowed (it must use https)')

  // A stored URL that resolves privately at sign-in: the start is refused, nothing fetched.
  await verifiedDomain(s, admin.workspaceId, 'meta-corp.test')
  const pasted = await s.inject({
    method: 'POST',
    url: '/api/sso/connections',
    headers: { cookie: admin.cookie },
    payload: { name: 'Corp', protocol: 'saml', domains: ['meta-corp.test'], saml: { idpMetadataXml: idp.metadata(), idpCertificates: [keys.certificate] } }
  })
  t.equal(pasted.statusCode, 201, pasted.body)
  await s.db.query('UPDATE sso_connections SET saml_idp_metadata_xml = NULL, saml_idp_metadata_url = $2 WHERE id = $1',
    [pasted.json().id, 'https://rebound.test/metadata'])
  const start = await s.inject({ method: 'GET', url: '/api/oauth/sso?email=ann@meta-corp.test' })
  t.equal(start.statusCode, 502)
  t.match(start.json(), { code: 'UPSTREAM_FAILED' })
})
