import { openWith, sealWith } from '../lib/crypto.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { serviceError } from '../errors.js'
import { insertSsoFlow, type SsoFlowPurpose } from '../db/sso-flows.js'
import type { SsoConnectionRow } from '../db/sso-connections.js'
import { domainOfEmail } from '../domains/name.js'
import { storedAddress } from '../lib/email.js'
import { findSsoConnectionByDomain } from '../db/sso-connections.js'
import { openClientSecret } from './connection-secret.js'
import { oidcRedirectUri, samlEndpoints } from './connection-context.js'
import { discover, startSignIn as startOidc, type OidcConnection, type OidcProvider } from './oidc.js'
import { OidcError } from './oidc-errors.js'
import { parseIdpMetadata, SamlError, startSignIn as startSaml, type SamlConnection } from './saml.js'
import { idpEndpointsByUrl, MetadataUnavailable } from './saml-metadata-fetch.js'
import type { SsoSignInDeps } from './sign-in-context.js'

// The start of an SSO sign-in: the connection's provider, a flow row bound to the browser's state
// (10 minutes, single use) and the URL to send the browser to. The state is the OIDC `state`, or
// for SAML a random value the browser holds in a cookie (and the RelayState repeats). The PKCE
// verifier is sealed under the at-rest key bound to the state's hash.

export const SSO_FLOW_TTL_MS = 10 * 60_000

const GOOGLE_ISSUER = 'https://accounts.google.com'

/** What the OIDC relying party needs of a connection row, the client secret opened. */
export function oidcConnectionOf (deps: Pick<SsoSignInDeps, 'key'>, row: SsoConnectionRow): OidcConnection {
  const oidc = row.oidc
  if (oidc === null) throw new OidcError('invalid_response')
  return {
    id: row.id,
    issuer: oidc.issuer,
    clientId: oidc.clientId,
    clientSecret: openClientSecret(deps.key, row.id, oidc.clientSecretEnc),
    provider: oidc.tenantId !== null ? 'entra' : oidc.issuer === GOOGLE_ISSUER ? 'google' : 'generic',
    tenantId: oidc.tenantId ?? undefined
  }
}

/**
 * What the SAML service provider needs of a connection row: the IdP's entity ID and redirect
 * endpoint as the connection sets them, else from its metadata (pasted, or by URL: fetched and
 * kept by saml-metadata-fetch.ts), and the connection's own certificates, the only keys that
 * verify a response (never one of the metadata's). Metadata by URL that cannot be read, with no
 * good copy kept, is the provider unreachable, as OIDC discovery that fails: the start answers 502
 * UPSTREAM_FAILED, the ACS refuses (`provider_unreachable`, audited).
 */
export async function samlConnectionOf (
  deps: Pick<SsoSignInDeps, 'cache' | 'fetch' | 'log'>, row: SsoConnectionRow
): Promise<SamlConnection> {
  const saml = row.saml
  if (saml === null) throw new SamlError('malformed')
  let entityId = saml.entityId
  let ssoUrl = saml.ssoUrl
  if (entityId === null || ssoUrl === null) {
    const metadata = saml.metadataXml !== null
      ? parseIdpMetadata(saml.metadataXml)
      : saml.metadataUrl !== null ? await fetchedMetadata(deps, row.id, saml.metadataUrl) : null
    entityId ??= metadata?.entityId ?? null
    ssoUrl ??= metadata?.ssoRedirectUrl ?? null
  }
  if (entityId === null || ssoUrl === null) throw new SamlError('no_sso_redirect')
  return { idpEntityId: entityId, ssoRedirectUrl: ssoUrl, certificates: saml.certificates }
}

async function fetchedMetadata (
  deps: Pick<SsoSignInDeps, 'cache' | 'fetch' | 'log'>, connectionId: string, url: string
): ReturnType<typeof idpEndpointsByUrl> {
  try {
    return await idpEndpointsByUrl(deps, connectionId, url)
  } catch (err) {
    if (!(err instanceof MetadataUnavailable)) throw err
    deps.log.warn({ connectionId, why: err.why }, 'SAML IdP metadata could not be read: SSO sign-in refused')
    // The one "provider unreachable" both protocols' callers know (startFlow, sign-in.ts's refusals).
    throw new OidcError('provider_unreachable', { cause: err })
  }
}

export async function oidcProviderOf (deps: SsoSignInDeps, row: SsoConnectionRow): Promise<OidcProvider> {
  return await discover(oidcConnectionOf(deps, row), { ...deps.fetch, cache: deps.cache })
}

const verifierContext = (stateHash: string): string => `sso-flow:${stateHash}`

export function openVerifier (deps: Pick<SsoSignInDeps, 'key'>, stateHash: string, sealed: string): string {
  return openWith(deps.key, sealed, verifierContext(stateHash))
}

export interface SsoStart { url: string, state: string, protocol: 'oidc' | 'saml', connectionId: string }

/** A flow for `row` (a person's sign-in, or an admin's test), stored; where to send the browser. */
export async function startFlow (
  deps: SsoSignInDeps, row: SsoConnectionRow, purpose: SsoFlowPurpose, adminId: string | null
): Promise<SsoStart> {
  const now = deps.clock.now()
  const base = { connectionId: row.id, purpose, adminId, expiresAt: new Date(now.getTime() + SSO_FLOW_TTL_MS), now }
  try {
    if (row.protocol === 'oidc') {
      const provider = await oidcProviderOf(deps, row)
      const start = await startOidc(provider, { redirectUri: oidcRedirectUri(deps.config.publicUrl) })
      const stateHash = hashToken(start.state)
      await insertSsoFlow(deps.db, {
        ...base,
        stateHash,
        oidcNonce: start.nonce,
        oidcVerifierEnc: sealWith(deps.key, start.codeVerifier, verifierContext(stateHash)),
        samlRequestId: null
      })
      return { url: start.url, state: start.state, protocol: 'oidc', connectionId: row.id }
    }
    const state = randomToken()
    const sp = samlEndpoints(deps.config.publicUrl, row.id)
    const start = await startSaml(await samlConnectionOf(deps, row), { ...sp, now })
    await insertSsoFlow(deps.db, {
      ...base, stateHash: hashToken(state), oidcNonce: null, oidcVerifierEnc: null, samlRequestId: start.requestId
    })
    const url = new URL(start.url)
    url.searchParams.set('RelayState', state)
    return { url: url.href, state, protocol: 'saml', connectionId: row.id }
  } catch (err) {
    if (!(err instanceof OidcError) && !(err instanceof SamlError)) throw err
    deps.log.warn({ code: err.code, connectionId: row.id }, 'SSO sign-in could not start')
    throw serviceError('UPSTREAM_FAILED', ['identity provider'])
  }
}

/** A person's sign-in, found by the domain of their address; 404 SSO_CONNECTION_NOT_FOUND when none serves it. */
export async function startByEmail (deps: SsoSignInDeps, email: string): Promise<SsoStart> {
  const address = storedAddress(email)
  const row = address === null ? null : await findSsoConnectionByDomain(deps.db, domainOfEmail(address))
  if (row === null) throw serviceError('SSO_CONNECTION_NOT_FOUND')
  return await startFlow(deps, row, 'sign_in', null)
}
