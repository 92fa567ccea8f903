import {
  allowInsecureRequests, authorizationCodeGrant, buildAuthorizationUrl, calculatePKCECodeChallenge,
  ClientSecretBasic, ClientSecretPost, clockSkew, clockTolerance, Configuration, customFetch, discovery,
  enableNonRepudiationChecks, getJwksCache, randomNonce, randomPKCECodeVerifier, randomState, setJwksCache,
  type ServerMetadata
} from 'openid-client'
import type { OidcCache } from './oidc-cache.js'
import { OidcError, toOidcError } from './oidc-errors.js'
import { createProviderFetch, DEFAULT_TIMEOUT_MS, insecureAllowed, type ProviderFetchOptions } from './oidc-fetch.js'
import { assertPinnedTenant, identityFrom, type OidcConnection, type OidcIdentity } from './oidc-identity.js'

// The OpenID Connect relying party of a company's own connection (issue 53), on openid-client 6:
// authorization code flow with PKCE S256, `state` and a single-use `nonce`, the RFC 9207 `iss`
// response parameter, and the ID token's issuer, audience, times, algorithm and signature checked.
// No HTTP route and no database here: the caller stores what startSignIn returns (bound to the
// browser and the connection), hands it back to finishSignIn once, and decides who signs in.
//
// openid-client trusts an ID token from the token endpoint for its TLS (OIDC Core 3.1.3.7) and
// does not verify its signature unless told: enableNonRepudiationChecks makes it verify against
// the provider's JWKS, so a token endpoint that is not the provider's (or a provider's mistake)
// cannot sign someone in.

export type { OidcConnection, OidcIdentity } from './oidc-identity.js'
export { vouchesFor } from './oidc-identity.js'

/** ID token algorithms accepted, in order of preference: never `none`, never HMAC (the client secret is no key). */
const ALLOWED_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA'] as const
/** How far the provider's clock may be from ours, in seconds, for `exp`, `nbf` and `iat`. */
const CLOCK_TOLERANCE_S = 30

export interface DiscoverOptions extends ProviderFetchOptions {
  cache: OidcCache
}

/** A connection with its provider's metadata: what startSignIn and finishSignIn work from. */
export interface OidcProvider {
  readonly connection: OidcConnection
  /** The discovered metadata, plain JSON. */
  readonly metadata: ServerMetadata
  /** The one algorithm ID tokens must be signed with (set as id_token_signed_response_alg). */
  readonly idTokenAlg: string
  readonly options: DiscoverOptions
}

export interface SignInStart {
  /** Where to send the browser. */
  url: string
  state: string
  nonce: string
  codeVerifier: string
}

export interface SignInExpectation {
  state: string
  nonce: string
  codeVerifier: string
  redirectUri: string
}

const cacheKey = (c: OidcConnection): string => `${c.id}\n${c.issuer}`

async function fetchMetadata (connection: OidcConnection, options: DiscoverOptions): Promise<ServerMetadata> {
  const issuer = new URL(connection.issuer)
  const fetch = createProviderFetch(options, () => { options.cache.count('discovery', cacheKey(connection)) })
  let found: Configuration
  try {
    found = await discovery(issuer, connection.clientId, undefined, undefined, {
      [customFetch]: fetch,
      timeout: Math.ceil((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000),
      execute: insecureAllowed(issuer, options) ? [allowInsecureRequests] : []
    })
  } catch (err) {
    throw toOidcError(err)
  }
  const metadata = JSON.parse(JSON.stringify(found.serverMetadata())) as ServerMetadata
  // openid-client accepts another issuer from login.microsoftonline.com (the `{tenantid}`
  // template of multi-tenant apps); a connection is one issuer, exactly.
  if (metadata.issuer !== connection.issuer) throw new OidcError('issuer_mismatch')
  if (metadata.authorization_endpoint === undefined || metadata.token_endpoint === undefined ||
    metadata.jwks_uri === undefined) throw new OidcError('invalid_response')
  return metadata
}

/** The provider of `connection`, from the cache or discovered (with a deadline, under the address policy). */
export async function discover (connection: OidcConnection, options: DiscoverOptions): Promise<OidcProvider> {
  assertPinnedTenant(connection)
  let issuer: URL
  try {
    issuer = new URL(connection.issuer)
  } catch (err) {
    throw new OidcError('invalid_response', { cause: err })
  }
  if (issuer.protocol !== 'https:' && !insecureAllowed(issuer, options)) throw new OidcError('address_not_allowed')
  const load = async (): Promise<ServerMetadata> => await fetchMetadata(connection, options)
  const metadata = await options.cache.metadata(cacheKey(connection), load)
  const supported = metadata.id_token_signing_alg_values_supported ?? ['RS256']
  const idTokenAlg = ALLOWED_ALGS.find(alg => supported.includes(alg))
  if (idTokenAlg === undefined) throw new OidcError('unsupported_algorithm')
  return { connection, metadata, idTokenAlg, options }
}

/** A fresh openid-client Configuration for one call: clock, algorithm, client authentication, fetch. */
function configurationOf (provider: OidcProvider): Configuration {
  const { connection, metadata, options } = provider
  const methods = metadata.token_endpoint_auth_methods_supported
  // client_secret_basic is the default where the provider lists nothing (OIDC Discovery).
  const auth = methods === undefined || methods.includes('client_secret_basic')
    ? ClientSecretBasic(connection.clientSecret)
    : ClientSecretPost(connection.clientSecret)
  const skew = Math.round((options.cache.clock.now().getTime() - Date.now()) / 1000)
  const config = new Configuration(metadata, connection.clientId, {
    id_token_signed_response_alg: provider.idTokenAlg,
    [clockSkew]: skew,
    [clockTolerance]: CLOCK_TOLERANCE_S
  }, auth)
  const key = cacheKey(connection)
  const jwksUri = metadata.jwks_uri === undefined ? undefined : new URL(metadata.jwks_uri).href
  config[customFetch] = createProviderFetch(options, url => {
    options.cache.count(url.href === jwksUri ? 'jwks' : 'token', key)
  })
  config.timeout = Math.ceil((options.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000)
  if (insecureAllowed(new URL(connection.issuer), options)) allowInsecureRequests(config)
  enableNonRepudiationChecks(config)
  return config
}

/** The authorization request: PKCE S256, random state and nonce. The caller keeps all but `url`. */
export async function startSignIn (
  provider: OidcProvider,
  request: { redirectUri: string, scopes?: readonly string[] }
): Promise<SignInStart> {
  const scopes = new Set(['openid', ...(request.scopes ?? ['email', 'profile'])])
  const state = randomState()
  const nonce = randomNonce()
  const codeVerifier = randomPKCECodeVerifier()
  const url = buildAuthorizationUrl(configurationOf(provider), {
    redirect_uri: request.redirectUri,
    scope: [...scopes].join(' '),
    state,
    nonce,
    code_challenge: await calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256'
  })
  return { url: url.href, state, nonce, codeVerifier }
}

/**
 * The callback: checks the answer and the ID token, exchanges the code, and returns who signed
 * in, or throws an OidcError. `expected` is what startSignIn returned, taken (once) from where
 * the caller kept it; only the callback's query is read, on `expected.redirectUri`.
 */
export async function finishSignIn (
  provider: OidcProvider,
  callbackUrl: string | URL,
  expected: SignInExpectation
): Promise<OidcIdentity> {
  if (expected.state === '' || expected.codeVerifier === '') throw new OidcError('state_mismatch')
  if (expected.nonce === '') throw new OidcError('nonce_mismatch')
  const current = new URL(expected.redirectUri)
  current.search = new URL(callbackUrl, expected.redirectUri).search
  const config = configurationOf(provider)
  const key = cacheKey(provider.connection)
  const handed = provider.options.cache.jwks(key)
  if (handed !== undefined) setJwksCache(config, handed)
  let claims
  try {
    const tokens = await authorizationCodeGrant(config, current, {
      expectedState: expected.state,
      expectedNonce: expected.nonce,
      pkceCodeVerifier: expected.codeVerifier,
      idTokenExpected: true
    })
    claims = tokens.claims()
  } catch (err) {
    throw toOidcError(err)
  } finally {
    provider.options.cache.keepJwks(key, handed, getJwksCache(config))
  }
  if (claims === undefined) throw new OidcError('invalid_response')
  // openid-client checks `exp` and `nbf`; an `iat` in the future is as much a clock out of bounds.
  const now = provider.options.cache.clock.now().getTime() / 1000
  if (claims.iat > now + CLOCK_TOLERANCE_S) throw new OidcError('expired')
  return identityFrom(provider.connection, claims)
}
