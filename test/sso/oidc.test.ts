import { createServer } from 'node:net'
import { randomUUID } from 'node:crypto'
import t from 'tap'
import type { Clock } from '../../src/clock.js'
import { createOidcCache, type OidcCache } from '../../src/sso/oidc-cache.js'
import { OidcError, type OidcErrorCode } from '../../src/sso/oidc-errors.js'
import {
  discover, finishSignIn, startSignIn, vouchesFor, type OidcConnection, type OidcProvider, type SignInStart
} from '../../src/sso/oidc.js'
import { startOidcProvider, type TestProfile } from '../helpers/oidc-provider.js'
import type { JWTPayload } from 'jose'

// The OpenID Connect relying party (src/sso/oidc.ts) against a real OpenID Provider on loopback
// (test/helpers/oidc-provider.ts): a full code flow per provider profile, the caches counted,
// then every forged or altered answer refused with its code. Forgeries the provider cannot make
// are signed with jose and handed out by its real token endpoint.

const idp = await startOidcProvider(t, {
  profiles: [
    { name: 'okta', kind: 'okta' },
    { name: 'entra', kind: 'entra' },
    { name: 'google', kind: 'google' },
    { name: 'keycloak', kind: 'okta', alg: 'ES256' }
  ]
})
const LOOPBACK = { allowHosts: ['127.0.0.1'], allowHttp: true }
const KIND = { okta: 'generic', entra: 'entra', google: 'google' } as const

function connectionOf (p: TestProfile, patch: Partial<OidcConnection> = {}): OidcConnection {
  return {
    id: `conn-${p.name}`,
    issuer: p.issuer,
    clientId: p.clientId,
    clientSecret: p.clientSecret,
    provider: KIND[p.kind],
    ...(p.kind === 'entra' && { tenantId: p.tenant }),
    ...patch
  }
}

/** The real time, moved on by `advance`: the provider on loopback keeps the real time, so a
 * frozen clock would drift from it while a test runs. */
class ShiftedClock implements Clock {
  #offset = 0
  now (): Date { return new Date(Date.now() + this.#offset) }
  advance (ms: number): void { this.#offset += ms }
}

interface Rp { provider: OidcProvider, cache: OidcCache, clock: ShiftedClock }

async function rp (name: string, patch: Partial<OidcConnection> = {}): Promise<Rp> {
  const clock = new ShiftedClock()
  const cache = createOidcCache({ clock })
  const provider = await discover(connectionOf(idp.profile(name), patch), { ...LOOPBACK, cache })
  return { provider, cache, clock }
}

/** A sign-in up to the callback: what the caller stored, and where the provider sent the browser. */
async function signIn (r: Rp, login: string): Promise<{ start: SignInStart, callback: URL }> {
  const start = await startSignIn(r.provider, { redirectUri: idp.redirectUri })
  return { start, callback: await idp.signIn(start.url, login) }
}

const expectationOf = (start: SignInStart) => ({ ...start, redirectUri: idp.redirectUri })

async function refusal (promise: Promise<unknown>): Promise<OidcErrorCode | 'accepted'> {
  try {
    await promise
    return 'accepted'
  } catch (err) {
    if (err instanceof OidcError) return err.code
    throw err
  }
}

/** One sign-in whose ID token `forge` replaces; the code finishSignIn refuses it with. */
async function forged (r: Rp, forge: (claims: JWTPayload) => Promise<string>, login = 'alice') {
  const name = r.provider.connection.id.replace('conn-', '')
  const { start, callback } = await signIn(r, login)
  idp.tamperNextIdToken(name, forge)
  return await refusal(finishSignIn(r.provider, callback, expectationOf(start)))
}

const now = () => Math.floor(Date.now() / 1000)

t.test('a full code flow per profile gives the identity and what the provider vouches for', async t => {
  const okta = await rp('okta')
  t.equal(okta.provider.idTokenAlg, 'RS256')
  t.equal(okta.provider.metadata.authorization_response_iss_parameter_supported, true)
  t.same(JSON.parse(JSON.stringify(okta.provider.metadata)), okta.provider.metadata, 'the metadata is plain JSON')
  const alice = await signIn(okta, 'alice')
  const url = new URL(alice.start.url)
  t.equal(url.searchParams.get('code_challenge_method'), 'S256')
  t.equal(url.searchParams.get('scope'), 'openid email profile')
  t.equal(alice.callback.searchParams.get('iss'), okta.provider.metadata.issuer, 'RFC 9207 iss in the callback')
  const a = await finishSignIn(okta.provider, alice.callback, expectationOf(alice.start))
  t.same(a, {
    issuer: idp.profile('okta').issuer, subject: 'alice', email: 'alice@example.com', emailVerified: true, name: 'Alice Adams'
  })
  t.ok(vouchesFor(a, 'example.com', okta.provider.connection))
  t.notOk(vouchesFor(a, 'example.org', okta.provider.connection), 'another domain')
  const bob = await signIn(okta, 'bob')
  const b = await finishSignIn(okta.provider, bob.callback, expectationOf(bob.start))
  t.equal(b.emailVerified, false)
  t.notOk(vouchesFor(b, 'example.com', okta.provider.connection), 'email_verified false')

  const entra = await rp('entra')
  const tenant = idp.profile('entra').tenant
  const carol = await signIn(entra, 'carol')
  const c = await finishSignIn(entra.provider, carol.callback, expectationOf(carol.start))
  t.match(c, { subject: 'carol', email: 'carol@example.com', emailVerified: true, tid: tenant })
  t.ok(vouchesFor(c, 'example.com', entra.provider.connection), 'xms_edov and the pinned tid')
  t.notOk(vouchesFor(c, 'example.com', { ...entra.provider.connection, tenantId: randomUUID() }), 'another pinned tenant')
  const dave = await signIn(entra, 'dave')
  const d = await finishSignIn(entra.provider, dave.callback, expectationOf(dave.start))
  t.equal(d.emailVerified, false, 'Entra email without xms_edov is unverified')
  t.notOk(vouchesFor(d, 'example.com', entra.provider.connection))

  const google = await rp('google')
  const erin = await signIn(google, 'erin')
  const e = await finishSignIn(google.provider, erin.callback, expectationOf(erin.start))
  t.match(e, { subject: 'erin', emailVerified: true, hd: 'example.com' })
  t.ok(vouchesFor(e, 'example.com', google.provider.connection))
  const frank = await signIn(google, 'frank')
  const f = await finishSignIn(google.provider, frank.callback, expectationOf(frank.start))
  t.equal(f.hd, undefined)
  t.notOk(vouchesFor(f, 'gmail.example', google.provider.connection), 'Google: no hd, no vouching')

  const keycloak = await rp('keycloak')
  t.equal(keycloak.provider.idTokenAlg, 'ES256', 'the allow-list meets what the provider signs with')
  const k = await signIn(keycloak, 'alice')
  t.match(await finishSignIn(keycloak.provider, k.callback, expectationOf(k.start)), { subject: 'alice' })
})

t.test('discovery and JWKS are fetched once per cache period, not per sign-in', async t => {
  const okta = idp.profile('okta')
  const before = { ...okta.counts }
  const r = await rp('okta')
  for (let i = 0; i < 3; i++) {
    await discover(r.provider.connection, { ...LOOPBACK, cache: r.cache })
    const { start, callback } = await signIn(r, 'alice')
    await finishSignIn(r.provider, callback, expectationOf(start))
  }
  t.same(r.cache.counts, { discovery: 1, jwks: 1, token: 3, metadata: 0 })
  t.equal((okta.counts.discovery ?? 0) - (before.discovery ?? 0), 1, 'the provider saw one discovery')
  t.equal((okta.counts.jwks ?? 0) - (before.jwks ?? 0), 1, 'and one JWKS request')

  r.clock.advance(60 * 60_000)
  const again = await discover(r.provider.connection, { ...LOOPBACK, cache: r.cache })
  const { start, callback } = await signIn(r, 'alice')
  // The provider's clock has not moved with ours: its token, signed again an hour on.
  idp.tamperNextIdToken('okta', async c => await idp.sign('okta', { ...c, iat: c.iat! + 3600, exp: c.exp! + 3600 }))
  await finishSignIn(again, callback, expectationOf(start))
  t.same(r.cache.counts, { discovery: 2, jwks: 2, token: 4, metadata: 0 }, 'an hour later, both once more')

  const both = await Promise.all([1, 2, 3].map(async () =>
    await discover(r.provider.connection, { ...LOOPBACK, cache: r.cache })))
  t.equal(both.length, 3)
  t.equal(r.cache.counts.discovery, 2, 'concurrent callers within the period share the cache')
})

t.test('ID tokens signed with none, HMAC, another key or by another issuer are refused', async t => {
  const r = await rp('okta')
  const okta = idp.profile('okta')
  t.equal(await forged(r, async c => await idp.sign('okta', c, { alg: 'none' })), 'bad_algorithm', 'alg none')
  t.equal(await forged(r, async c => await idp.sign('okta', c, { alg: 'HS256', secret: okta.clientSecret })),
    'bad_algorithm', 'HS256 with the client secret')
  const other = await idp.newKey('okta')
  t.equal(await forged(r, async c => await idp.sign('okta', c, { ...other, kid: okta.kid })), 'bad_signature',
    'the right kid, another key')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, iss: idp.profile('google').issuer })),
    'issuer_mismatch', 'another issuer, signed with the right key')
  t.equal(await forged(r, async c => await idp.sign('google', { ...c, iss: idp.profile('google').issuer })),
    'issuer_mismatch', 'another provider\'s own token')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, aud: 'someone-else' })), 'audience_mismatch')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, aud: [c.aud as string, 'x'], azp: 'x' })),
    'audience_mismatch', 'azp of another client')
})

t.test('times: expired, not yet valid, issued in the future; the tolerance is bounded', async t => {
  const r = await rp('okta')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, iat: now() - 700, exp: now() - 120 })), 'expired')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, iat: now() - 700, exp: now() - 31 })), 'expired',
    'just past the 30 s tolerance')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, iat: now() - 700, exp: now() - 10 })), 'accepted',
    'within the tolerance')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, nbf: now() + 120 })), 'expired', 'nbf ahead')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, iat: now() + 120, exp: now() + 900 })), 'expired',
    'iat ahead')
  r.clock.advance(11 * 60_000)
  t.equal(await forged(r, async c => await idp.sign('okta', c)), 'expired', 'our clock 11 minutes on: the genuine token (10 minutes) has expired')
})

t.test('an unknown kid makes one JWKS refetch, then is refused; a rotated key is accepted after one refetch', async t => {
  const r = await rp('okta')
  const first = await signIn(r, 'alice')
  await finishSignIn(r.provider, first.callback, expectationOf(first.start))
  t.equal(r.cache.counts.jwks, 1)
  const stranger = await idp.newKey('okta')
  t.equal(await forged(r, async c => await idp.sign('okta', c, stranger)), 'unknown_key', 'within 60 s of the last fetch')
  t.equal(r.cache.counts.jwks, 1, 'openid-client\'s cool-down: no refetch for a set under 60 s old')
  r.clock.advance(61_000)
  t.equal(await forged(r, async c => await idp.sign('okta', c, stranger)), 'unknown_key')
  t.equal(r.cache.counts.jwks, 2, 'refetched once, then refused')
  t.equal(await forged(r, async c => await idp.sign('okta', c, stranger)), 'unknown_key')
  t.equal(r.cache.counts.jwks, 2, 'and not again right after')

  const rotated = await idp.newKey('okta')
  await idp.publishKey('okta', rotated)
  r.clock.advance(61_000)
  t.equal(await forged(r, async c => await idp.sign('okta', c, rotated)), 'accepted', 'the rotated key')
  t.equal(r.cache.counts.jwks, 3, 'after one refetch')
  t.equal(await forged(r, async c => await idp.sign('okta', c, rotated)), 'accepted')
  t.equal(r.cache.counts.jwks, 3, 'kept: the next sign-in fetches nothing')
})

t.test('state, nonce, PKCE, replay and the RFC 9207 iss parameter', async t => {
  const r = await rp('okta')
  type Alter = (s: { start: SignInStart, callback: URL }) => [URL, ReturnType<typeof expectationOf>]
  const attempt = async (alter: Alter) => {
    const flow = await signIn(r, 'alice')
    const [callback, expected] = alter(flow)
    return await refusal(finishSignIn(r.provider, callback, expected))
  }
  t.equal(await attempt(({ start, callback }) => [callback, { ...expectationOf(start), state: 'another' }]), 'state_mismatch')
  t.equal(await attempt(({ start, callback }) => [callback, { ...expectationOf(start), state: '' }]), 'state_mismatch',
    'no state stored for this browser')
  t.equal(await attempt(({ start, callback }) => {
    callback.searchParams.delete('state')
    return [callback, expectationOf(start)]
  }), 'state_mismatch', 'no state in the callback')
  t.equal(await attempt(({ start, callback }) => [callback, { ...expectationOf(start), nonce: 'another' }]), 'nonce_mismatch')
  t.equal(await attempt(({ start, callback }) => [callback, { ...expectationOf(start), nonce: '' }]), 'nonce_mismatch',
    'the nonce was consumed already')
  t.equal(await forged(r, async c => await idp.sign('okta', { ...c, nonce: undefined })), 'nonce_mismatch', 'no nonce in the token')
  t.equal(await attempt(({ start, callback }) => [callback, { ...expectationOf(start), codeVerifier: `${start.codeVerifier}x` }]),
    'code_rejected', 'PKCE verifier mismatch: the provider refuses the code')
  t.equal(await attempt(({ start, callback }) => {
    callback.searchParams.delete('iss')
    return [callback, expectationOf(start)]
  }), 'response_iss_mismatch', 'iss missing where the provider advertises it')
  t.equal(await attempt(({ start, callback }) => {
    callback.searchParams.set('iss', idp.profile('google').issuer)
    return [callback, expectationOf(start)]
  }), 'response_iss_mismatch', 'iss of another provider (mix-up)')
  t.equal(await attempt(({ start, callback }) => {
    const error = new URL(callback)
    error.search = new URLSearchParams({
      error: 'access_denied', state: start.state, iss: r.provider.metadata.issuer
    }).toString()
    return [error, expectationOf(start)]
  }), 'provider_error', 'the provider says no')

  const { start, callback } = await signIn(r, 'alice')
  await finishSignIn(r.provider, callback, expectationOf(start))
  t.equal(await refusal(finishSignIn(r.provider, callback, expectationOf(start))), 'code_rejected', 'a replayed callback')
  t.equal(r.cache.counts.discovery, 1)
})

t.test('Entra ID: the tenant is pinned, tid checked, the {tenantid} template refused', async t => {
  const entra = idp.profile('entra')
  const r = await rp('entra')
  const otherTenant = randomUUID()
  t.equal(await forged(r, async c => await idp.sign('entra', { ...c, tid: otherTenant }), 'carol'), 'tenant_mismatch',
    'the pinned issuer with another tid')
  t.equal(await forged(r, async c => await idp.sign('entra', {
    ...c, tid: otherTenant, iss: entra.issuer.replace(entra.tenant, otherTenant)
  }), 'carol'), 'issuer_mismatch', 'another tenant\'s token')
  t.equal(await forged(r, async c => await idp.sign('entra', { ...c, tid: undefined }), 'carol'), 'tenant_mismatch', 'no tid')

  for (const [why, patch] of [
    ['the {tenantid} template', { issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0' }],
    ['the multi-tenant alias', { issuer: 'https://login.microsoftonline.com/common/v2.0' }],
    ['no tenant', { tenantId: undefined }],
    ['a tenant that is no GUID', { tenantId: 'organizations' }],
    ['an issuer of another tenant', { tenantId: otherTenant }]
  ] as const) {
    const cache = createOidcCache({ clock: new ShiftedClock() })
    const code = await refusal(discover(connectionOf(entra, patch), { ...LOOPBACK, cache }))
    t.equal(code, 'tenant_not_pinned', why)
    t.equal(cache.counts.discovery, 0, `${why}: nothing fetched`)
  }

  idp.patchDiscovery('entra', { issuer: `${idp.origin}/entra/{tenantid}/v2.0` })
  t.teardown(() => { idp.patchDiscovery('entra', {}) })
  const cache = createOidcCache({ clock: new ShiftedClock() })
  t.equal(await refusal(discover(connectionOf(entra), { ...LOOPBACK, cache })), 'issuer_mismatch',
    'discovery answering the template issuer')
})

t.test('discovery: address policy, deadline, algorithms', async t => {
  const okta = idp.profile('okta')
  const cache = createOidcCache({ clock: new ShiftedClock() })
  t.equal(await refusal(discover(connectionOf(okta), { cache })), 'address_not_allowed', 'http and loopback by default')
  t.equal(await refusal(discover(connectionOf(okta), { cache, allowHosts: ['127.0.0.1'] })), 'address_not_allowed',
    'http not asked for')
  t.equal(await refusal(discover(connectionOf(okta, { issuer: okta.issuer.replace('http:', 'https:') }), { cache })),
    'address_not_allowed', 'https to loopback, not allowed')
  t.equal(cache.counts.discovery, 0)

  const silent = createServer(() => {})
  await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
  t.teardown(() => { silent.close() })
  const port = (silent.address() as { port: number }).port
  const began = Date.now()
  t.equal(await refusal(discover(connectionOf(okta, { id: 'silent', issuer: `http://127.0.0.1:${port}/x` }),
    { ...LOOPBACK, cache, timeoutMs: 300 })), 'provider_unreachable', 'a provider that never answers')
  t.ok(Date.now() - began < 3_000, 'within the deadline')

  idp.patchDiscovery('okta', { id_token_signing_alg_values_supported: ['HS256', 'none'] })
  t.teardown(() => { idp.patchDiscovery('okta', {}) })
  t.equal(await refusal(discover(connectionOf(okta, { id: 'hs-only' }), { ...LOOPBACK, cache })), 'unsupported_algorithm')

  // The policy holds for every request, not only discovery: a token endpoint at a metadata address.
  idp.patchDiscovery('okta', { token_endpoint: 'https://169.254.169.254/token' })
  const r = await rp('okta', { id: 'metadata-token' })
  t.equal(r.provider.metadata.token_endpoint, 'https://169.254.169.254/token')
  const { start, callback } = await signIn(r, 'alice')
  t.equal(await refusal(finishSignIn(r.provider, callback, expectationOf(start))), 'address_not_allowed',
    'the token request is refused')
  t.equal(r.cache.counts.token, 0)
})
