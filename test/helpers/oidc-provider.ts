import { randomBytes, randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { decodeJwt, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWTPayload } from 'jose'
import Provider, { type ProviderContext } from 'oidc-provider'
import { escapeHtml } from '../../src/lib/html.js'

// A real OpenID Provider in the test process (oidc-provider 9, a certified OP) on 127.0.0.1 and a
// random port, one issuer per profile: http://127.0.0.1:<port>/okta, /entra/<tenant>/v2.0,
// /google. Each profile has its client, its accounts and its own keys, generated at start (no key
// or certificate is committed to expire). Its discovery says
// authorization_response_iss_parameter_supported, so RFC 9207 applies.
//
// Signing in needs no browser: `signIn(url, login)` follows the authorization request, posts the
// login form and returns the callback URL (not followed). A browser can use the same form (plain
// HTML, no external resource; oidc-provider's devInteractions are off, and with them the web font
// they import). Consent is implied: the client is the relying party under test.
//
// What the provider cannot be made to send, tests forge with jose: `tamperNextIdToken` replaces
// the ID token of the next token response (the forgery arrives over the real token endpoint),
// `sign` signs claims with the profile's key or another, `rotateKey` publishes a new key in the
// JWKS, `patchDiscovery` changes the discovery document. Requests are counted per route.

type ProfileKind = 'okta' | 'entra' | 'google'
type Alg = 'RS256' | 'PS256' | 'ES256' | 'EdDSA'
type Claims = Record<string, unknown>

export interface ProfileSpec {
  name: string
  kind: ProfileKind
  alg?: Alg
  accounts?: Record<string, Claims>
}

interface SigningKey { kid: string, alg: Alg, privateKey: CryptoKey }

export interface TestProfile {
  name: string
  kind: ProfileKind
  issuer: string
  clientId: string
  clientSecret: string
  /** Entra: the tenant GUID in the issuer and in every `tid`. */
  tenant: string
  alg: Alg
  /** The `kid` of the key the provider signs with. */
  kid: string
  /** Requests answered, by oidc-provider route (discovery, jwks, token, authorization, resume). */
  counts: Record<string, number>
}

export interface TestIdp {
  origin: string
  redirectUri: string
  profile(name: string): TestProfile
  /** Drives the sign-in of `login` without a browser; returns the URL the provider redirects back to. */
  signIn(authorizationUrl: string, login: string): Promise<URL>
  /** The next token response of `profile` carries `forge(genuine ID token claims)` as its ID token. */
  tamperNextIdToken(profile: string, forge: (claims: JWTPayload) => Promise<string>): void
  /** Signs `claims` with the profile's current key, or `key` when given; `alg: 'none'` makes an unsecured JWT. */
  sign(profile: string, claims: JWTPayload, key?: SigningKey | { alg: 'none' } | { alg: 'HS256', secret: string }): Promise<string>
  /** A new key pair of the profile's algorithm that no JWKS publishes (yet). */
  newKey(profile: string): Promise<SigningKey>
  /** Publishes `key` in the profile's JWKS from now on. */
  publishKey(profile: string, key: SigningKey): Promise<void>
  /** Merges `patch` into the profile's discovery document from now on (replacing the last patch). */
  patchDiscovery(profile: string, patch: Record<string, unknown>): void
  close(): Promise<void>
}

const DEFAULT_REDIRECT_URI = 'http://127.0.0.1:9/sso/oidc/callback'

const DEFAULT_ACCOUNTS: Record<ProfileKind, Record<string, Claims>> = {
  okta: {
    alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Adams' },
    bob: { email: 'bob@example.com', email_verified: false, name: 'Bob Brown' }
  },
  entra: {
    carol: { email: 'carol@example.com', xms_edov: true, name: 'Carol Clark' },
    dave: { email: 'dave@example.com', name: 'Dave Dunn' }
  },
  google: {
    erin: { email: 'erin@example.com', email_verified: true, hd: 'example.com', name: 'Erin Evans' },
    frank: { email: 'frank@gmail.example', email_verified: true, name: 'Frank Fox' }
  }
}

const DEFAULT_PROFILES: ProfileSpec[] = [
  { name: 'okta', kind: 'okta' },
  { name: 'entra', kind: 'entra' },
  { name: 'google', kind: 'google' }
]

async function newSigningKey (alg: Alg): Promise<SigningKey> {
  const pair = await generateKeyPair(alg, { extractable: true, ...(alg === 'EdDSA' && { crv: 'Ed25519' }) })
  return { kid: randomUUID(), alg, privateKey: pair.privateKey }
}

async function publicJwk (key: SigningKey): Promise<Record<string, unknown>> {
  const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...pub } = await exportJWK(key.privateKey)
  return { ...pub, kid: key.kid, alg: key.alg, use: 'sig' }
}

const page = (action: string, error = ''): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><main><h1>Sign in</h1>${error === '' ? '' : `<p role="alert">${escapeHtml(error)}</p>`}
<form method="post" action="${escapeHtml(action)}">
<label>Login <input name="login" autocomplete="username" required autofocus></label>
<button type="submit">Sign in</button></form></main></body></html>`

async function readForm (req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
}

interface Running {
  public: TestProfile
  spec: Required<ProfileSpec>
  prefix: string
  provider: Provider
  key: SigningKey
  published: Array<Record<string, unknown>>
  discoveryPatch: Record<string, unknown>
  forge: ((claims: JWTPayload) => Promise<string>) | null
}

function providerConfig (p: Omit<Running, 'provider'>, redirectUris: string[]): Record<string, unknown> {
  const { spec } = p
  return {
    clients: [{
      client_id: p.public.clientId,
      client_secret: p.public.clientSecret,
      redirect_uris: redirectUris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      id_token_signed_response_alg: spec.alg,
      token_endpoint_auth_method: 'client_secret_basic'
    }],
    jwks: { keys: [] },
    findAccount: (_ctx: unknown, id: string) => {
      const claims = spec.accounts[id]
      if (claims === undefined) return undefined
      const tid = spec.kind === 'entra' ? { tid: p.public.tenant } : {}
      return { accountId: id, claims: () => ({ sub: id, ...tid, ...claims }) }
    },
    claims: { openid: ['sub', 'tid', 'xms_edov', 'hd'], email: ['email', 'email_verified'], profile: ['name'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `${p.prefix}/interaction/${interaction.uid}` },
    // The relying party under test is first-party: consent is given with the login.
    loadExistingGrant: async (ctx: {
      oidc: { provider: Provider, client: { clientId: string }, session: { accountId: string } }
    }) => {
      const { provider, client, session } = ctx.oidc
      const grant = new provider.Grant({ clientId: client.clientId, accountId: session.accountId })
      grant.addOIDCScope('openid email profile')
      await grant.save()
      return grant
    },
    pkce: { required: () => true },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    renderError: (ctx: ProviderContext, out: Record<string, unknown>) => { ctx.body = out },
    clockTolerance: 0
  }
}

/** Counts requests per route, publishes the extra keys, applies the discovery patch and the next forgery. */
function instrument (p: Running): void {
  p.provider.use(async (ctx, next) => {
    await next()
    const route = ctx.oidc?.route
    if (route === undefined) return
    p.public.counts[route] = (p.public.counts[route] ?? 0) + 1
    const body = ctx.body as Record<string, unknown>
    if (route === 'discovery') ctx.body = { ...body, ...p.discoveryPatch }
    if (route === 'jwks') ctx.body = { keys: [...(body.keys as unknown[]), ...p.published] }
    if (route === 'token' && ctx.status === 200 && p.forge !== null) {
      const forge = p.forge
      p.forge = null
      ctx.body = { ...body, id_token: await forge(decodeJwt(body.id_token as string)) }
    }
  })
}

async function startProfile (spec: ProfileSpec, origin: string, redirectUris: string[]): Promise<Running> {
  const full: Required<ProfileSpec> = { alg: 'RS256', accounts: DEFAULT_ACCOUNTS[spec.kind], ...spec }
  const tenant = randomUUID()
  const prefix = spec.kind === 'entra' ? `/${spec.name}/${tenant}/v2.0` : `/${spec.name}`
  const key = await newSigningKey(full.alg)
  const base = {
    public: {
      name: spec.name,
      kind: spec.kind,
      issuer: `${origin}${prefix}`,
      clientId: `rp-${spec.name}`,
      clientSecret: randomBytes(32).toString('base64url'),
      tenant,
      alg: full.alg,
      kid: key.kid,
      counts: {}
    },
    spec: full,
    prefix,
    key,
    published: [],
    discoveryPatch: {},
    forge: null
  }
  const config = providerConfig(base, redirectUris)
  config.jwks = { keys: [{ ...await exportJWK(key.privateKey), kid: key.kid, alg: key.alg, use: 'sig' }] }
  const running: Running = { ...base, provider: new Provider(base.public.issuer, config) }
  instrument(running)
  return running
}

async function interaction (p: Running, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const action = (req.url ?? '').split('?')[0] ?? ''
  // Throws (400) without this browser's interaction cookie.
  await p.provider.interactionDetails(req, res)
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(action))
    return
  }
  const login = (await readForm(req)).get('login') ?? ''
  if (p.spec.accounts[login] === undefined) {
    res.writeHead(400, { 'content-type': 'text/html; charset=utf-8' }).end(page(action, 'No such account'))
    return
  }
  await p.provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false })
}

/** Follows the sign-in by hand as a browser would (a small cookie jar), posting the login form. */
async function driveSignIn (authorizationUrl: string, login: string): Promise<URL> {
  const jar = new Map<string, string>()
  const send = async (url: URL, init: RequestInit = {}): Promise<Response> => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    const res = await fetch(url, { ...init, redirect: 'manual', headers: { ...init.headers as Record<string, string>, cookie } })
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(';')[0] ?? ''
      const at = pair.indexOf('=')
      if (/expires=thu, 01 jan 1970/i.test(set)) jar.delete(pair.slice(0, at))
      else jar.set(pair.slice(0, at), pair.slice(at + 1))
    }
    return res
  }
  const redirected = async (url: URL, init: RequestInit = {}): Promise<URL> => {
    const res = await send(url, init)
    await res.arrayBuffer()
    const location = res.headers.get('location')
    if (res.status < 300 || res.status > 399 || location === null) throw new Error(`sign-in stopped at ${url.href}: ${res.status}`)
    return new URL(location, url)
  }
  const form = await redirected(new URL(authorizationUrl))
  const shown = await send(form)
  if (shown.status !== 200 || !(await shown.text()).includes('<form')) throw new Error(`no login form at ${form.href}`)
  const resume = await redirected(form, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ login }).toString()
  })
  return await redirected(resume)
}

export async function startOidcProvider (
  t: { teardown(fn: () => unknown): void },
  opts: { profiles?: ProfileSpec[], redirectUris?: string[] } = {}
): Promise<TestIdp> {
  const profiles: Running[] = []
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/'
    const p = profiles.find(x => path === x.prefix || path.startsWith(`${x.prefix}/`))
    if (p === undefined) {
      res.writeHead(404).end()
      return
    }
    if (path.startsWith(`${p.prefix}/interaction/`)) {
      interaction(p, req, res).catch(() => { if (!res.headersSent) res.writeHead(400).end() })
      return
    }
    // Mounted under the profile's path, as Express would: oidc-provider reads the mount path off originalUrl.
    Object.assign(req, { originalUrl: req.url, url: (req.url ?? '').slice(p.prefix.length) || '/' })
    p.provider.callback()(req, res)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const redirectUris = opts.redirectUris ?? [DEFAULT_REDIRECT_URI]
  for (const spec of opts.profiles ?? DEFAULT_PROFILES) profiles.push(await startProfile(spec, origin, redirectUris))
  const find = (name: string): Running => {
    const p = profiles.find(x => x.public.name === name)
    if (p === undefined) throw new Error(`no profile ${name}`)
    return p
  }
  const close = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise<void>(resolve => server.close(() => { resolve() }))
  }
  t.teardown(close)
  return {
    origin,
    redirectUri: redirectUris[0] ?? DEFAULT_REDIRECT_URI,
    profile: name => find(name).public,
    signIn: driveSignIn,
    tamperNextIdToken (name, forge) { find(name).forge = forge },
    async sign (name, claims, key) {
      const p = find(name)
      const use = key ?? p.key
      if (use.alg === 'none') return new UnsecuredJWT(claims).encode()
      if (use.alg === 'HS256') {
        return await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(use.secret))
      }
      return await new SignJWT(claims).setProtectedHeader({ alg: use.alg, kid: use.kid }).sign(use.privateKey)
    },
    async newKey (name) { return await newSigningKey(find(name).spec.alg) },
    async publishKey (name, key) { find(name).published.push(await publicJwk(key)) },
    patchDiscovery (name, patch) { find(name).discoveryPatch = patch },
    close
  }
}
