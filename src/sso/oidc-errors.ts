import { AuthorizationResponseError, ResponseBodyError } from 'openid-client'

// Every refusal of the OpenID Connect relying party is one OidcError with a short code: the
// caller audits the code and answers with it, never with openid-client's words. The library's
// error is kept as `cause` for the server's log. openid-client 6.9.1 (pinned) names most of its
// checks only in its messages, so the mapping below reads them; test/sso/oidc.test.ts refuses one
// forged or altered message per code, which is what guards this table against a library update.

export type OidcErrorCode =
  | 'address_not_allowed' // a discovery, JWKS or token URL the address policy refuses
  | 'provider_unreachable' // network failure, deadline passed, or an answer that is not the protocol's
  | 'tenant_not_pinned' // Entra ID: no tenant GUID, a `{tenantid}` template or a multi-tenant alias
  | 'unsupported_algorithm' // the provider signs ID tokens with no algorithm of our allow-list
  | 'provider_error' // the callback carries the provider's `error` (the person cancelled, access denied)
  | 'state_mismatch' // `state` missing or not the one this browser started with
  | 'response_iss_mismatch' // RFC 9207: the callback's `iss` missing (where advertised) or another issuer's
  | 'code_rejected' // the token endpoint refused the code (used, expired, or the PKCE verifier differs)
  | 'client_rejected' // the token endpoint refused our client id or secret
  | 'bad_algorithm' // the ID token's `alg` is not the one pinned for this client (none, HS256, …)
  | 'unknown_key' // the ID token's `kid` is in no key of the provider's JWKS, even after one refetch
  | 'bad_signature' // the ID token's signature does not verify
  | 'issuer_mismatch' // the ID token's or the discovered metadata's issuer is not the connection's
  | 'audience_mismatch' // the ID token is for another client (`aud`, `azp`)
  | 'expired' // `exp` past, or `nbf`/`iat` in the future, beyond the clock tolerance
  | 'nonce_mismatch' // `nonce` missing or not the one this sign-in sent
  | 'tenant_mismatch' // Entra ID: `tid` is not the pinned tenant
  | 'invalid_response' // any other malformed answer (no `sub`, no ID token, a bad JSON body)

const MESSAGES: Record<OidcErrorCode, string> = {
  address_not_allowed: 'The identity provider address is not allowed',
  provider_unreachable: 'The identity provider could not be reached',
  tenant_not_pinned: 'The connection must name one Entra ID tenant',
  unsupported_algorithm: 'The identity provider signs with no algorithm this service accepts',
  provider_error: 'The identity provider did not sign you in',
  state_mismatch: 'The sign-in was not started in this browser',
  response_iss_mismatch: 'The sign-in answer came from another identity provider',
  code_rejected: 'The identity provider refused the sign-in code',
  client_rejected: 'The identity provider refused this service\'s client credentials',
  bad_algorithm: 'The identity token is signed with an algorithm this connection does not accept',
  unknown_key: 'The identity token is signed with a key the identity provider does not publish',
  bad_signature: 'The identity token signature is not valid',
  issuer_mismatch: 'The identity token is from another issuer',
  audience_mismatch: 'The identity token is for another client',
  expired: 'The identity token has expired or is not yet valid',
  nonce_mismatch: 'The identity token does not belong to this sign-in',
  tenant_mismatch: 'The identity token is from another tenant',
  invalid_response: 'The identity provider answered with something that is not a valid sign-in'
}

export class OidcError extends Error {
  override name = 'OidcError'
  constructor (readonly code: OidcErrorCode, options?: { cause?: unknown, providerError?: string }) {
    super(MESSAGES[code], options?.cause === undefined ? undefined : { cause: options.cause })
    this.providerError = options?.providerError
  }

  /** For `provider_error`: the provider's OAuth `error` code (access_denied, …), a registered value. */
  readonly providerError: string | undefined
}

/** What a library check says, by its message or the claim it names; first match wins. */
const BY_CHECK: Array<[RegExp, OidcErrorCode]> = [
  [/"state"/, 'state_mismatch'],
  [/"iss" \(issuer\) response parameter|response parameter "iss"/, 'response_iss_mismatch'],
  [/"alg"|algorithm/i, 'bad_algorithm'],
  [/signature verification failed/, 'bad_signature'],
  [/"iss" \(issuer\) claim value|issuer does not match/, 'issuer_mismatch'],
  [/"aud" \(audience\)|"azp"/, 'audience_mismatch'],
  [/"nonce"/, 'nonce_mismatch']
]

/** The error and its causes, outermost first. */
function chain (err: unknown): unknown[] {
  const out: unknown[] = []
  for (let e = err; e instanceof Error && out.length < 8; e = e.cause) out.push(e)
  return out
}

function codeOf (e: Error): string | undefined {
  return (e as { code?: unknown }).code as string | undefined
}

/** Turns whatever openid-client (or our fetch) threw into an OidcError. */
export function toOidcError (err: unknown): OidcError {
  if (err instanceof OidcError) return err
  if (err instanceof AuthorizationResponseError) {
    return new OidcError('provider_error', { cause: err, providerError: err.error })
  }
  if (err instanceof ResponseBodyError) {
    const client = err.error === 'invalid_client' || err.error === 'unauthorized_client'
    return new OidcError(client ? 'client_rejected' : 'code_rejected', { cause: err })
  }
  const errors = chain(err) as Error[]
  const ours = errors.find(e => e instanceof OidcError)
  if (ours !== undefined) return new OidcError(ours.code, { cause: err })
  const codes = errors.map(codeOf)
  if (codes.includes('OAUTH_TIMEOUT') || codes.includes('OAUTH_ABORT')) {
    return new OidcError('provider_unreachable', { cause: err })
  }
  if (codes.includes('OAUTH_KEY_SELECTION_FAILED')) return new OidcError('unknown_key', { cause: err })
  if (codes.includes('OAUTH_JWT_TIMESTAMP_CHECK_FAILED')) return new OidcError('expired', { cause: err })
  const messages = errors.map(e => e.message).join(' | ')
  const found = BY_CHECK.find(([pattern]) => pattern.test(messages))
  if (found !== undefined) return new OidcError(found[1], { cause: err })
  if (codes.some(c => c === 'OAUTH_RESPONSE_IS_NOT_CONFORM' || c === 'OAUTH_RESPONSE_IS_NOT_JSON')) {
    return new OidcError('provider_unreachable', { cause: err })
  }
  return new OidcError('invalid_response', { cause: err })
}
