import type { Logger } from '../logger.js'
import type { OidcCache } from './oidc-cache.js'
import { OidcError } from './oidc-errors.js'
import { createProviderFetch, DEFAULT_TIMEOUT_MS, type ProviderFetchOptions } from './oidc-fetch.js'
import { SamlError, type SamlErrorCode } from './saml-error.js'
import { MAX_METADATA_CHARS, parseIdpMetadata, type IdpEndpoints } from './saml-metadata.js'

// A SAML connection's IdP metadata by URL (issue 53): fetched as OpenID Connect discovery is
// (oidc-fetch.ts: the address policy on the address really used, SSO_ALLOWED_HOSTS, http only to
// loopback where allowed, one deadline, no redirect followed), capped at the size the parser reads,
// and kept per connection and URL in the services' cache (oidc-cache.ts: one fetch a period, the
// last good copy serving on while refreshes fail). What it gives a connection is the IdP's entity
// ID and HTTP-Redirect endpoint, never a key: the connection's own certificates verify responses.

/** Why the metadata could not be read, in words an admin acts on ("it answered with status 404"). */
export class MetadataUnavailable extends Error {
  override name = 'MetadataUnavailable'
  constructor (readonly why: string, options?: { cause?: unknown }) {
    super(`SAML IdP metadata unavailable: ${why}`, options?.cause === undefined ? undefined : { cause: options.cause })
  }
}

const ACCEPT = 'application/samlmetadata+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1'
const SIZE = `${MAX_METADATA_CHARS / (1024 * 1024)} MiB`

const NOT_METADATA: Partial<Record<SamlErrorCode, string>> = {
  too_large: `it is larger than ${SIZE}`,
  no_sso_redirect: 'it names no HTTP-Redirect single sign-on endpoint',
  no_certificate: 'it lists no signing certificate'
}

function unreachable (err: unknown, deadline: AbortSignal, timeoutMs: number): string {
  if (deadline.aborted) return `it did not answer within ${timeoutMs / 1000} s`
  if (err instanceof OidcError && err.code === 'address_not_allowed') {
    const why = err.cause instanceof Error ? err.cause.message : 'it must use https'
    return `its address is not allowed (${why})`
  }
  // The fetch's size cap (no other answer of a GET is invalid_response).
  if (err instanceof OidcError && err.code === 'invalid_response') return `it is larger than ${SIZE}`
  const code = (err instanceof Error ? (err.cause as { code?: unknown } | undefined)?.code : undefined) ?? 'no answer'
  return `it could not be reached (${String(code)})`
}

/** Fetches and reads an IdP's metadata once: its entity ID and HTTP-Redirect endpoint; else MetadataUnavailable. */
export async function fetchIdpMetadata (
  url: string, opts: ProviderFetchOptions, onRequest: (url: URL) => void = () => {}
): Promise<IdpEndpoints> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  // One deadline for the whole answer, body included (the fetch's own is per request too).
  const deadline = AbortSignal.timeout(timeoutMs)
  const fetch = createProviderFetch(opts, onRequest, MAX_METADATA_CHARS)
  let xml: string
  try {
    const res = await fetch(url, {
      method: 'GET', headers: { accept: ACCEPT }, body: undefined, redirect: 'manual', signal: deadline
    })
    if (res.status >= 300 && res.status < 400) {
      throw new MetadataUnavailable(
        `it answered ${res.status}, a redirect, which is not followed: give the address it redirects to`)
    }
    if (res.status !== 200) throw new MetadataUnavailable(`it answered with status ${res.status}`)
    xml = await res.text()
  } catch (err) {
    if (err instanceof MetadataUnavailable) throw err
    throw new MetadataUnavailable(unreachable(err, deadline, timeoutMs), { cause: err })
  }
  try {
    const { entityId, ssoRedirectUrl } = parseIdpMetadata(xml)
    return { entityId, ssoRedirectUrl }
  } catch (err) {
    if (!(err instanceof SamlError)) throw err
    const why = NOT_METADATA[err.code] ?? 'it is not the SAML metadata of one identity provider'
    throw new MetadataUnavailable(why, { cause: err })
  }
}

export interface MetadataDeps {
  cache: OidcCache
  fetch: ProviderFetchOptions
  log: Pick<Logger, 'warn'>
}

/**
 * The endpoints of a connection's IdP from its metadata URL, kept in the cache per connection and
 * URL (each fetch counted as 'metadata'). A refresh that fails while a good copy is young enough
 * is logged and the copy answers; with none, MetadataUnavailable.
 */
export async function idpEndpointsByUrl (deps: MetadataDeps, connectionId: string, url: string): Promise<IdpEndpoints> {
  const key = `${connectionId}\n${url}`
  return await deps.cache.idpMetadata.get(
    key,
    async () => await fetchIdpMetadata(url, deps.fetch, () => { deps.cache.count('metadata', key) }),
    (err, ageMs) => {
      const why = err instanceof MetadataUnavailable ? err.why : String(err)
      deps.log.warn({ connectionId, why, ageMinutes: Math.round(ageMs / 60_000) },
        'SAML IdP metadata could not be refreshed: its last good copy serves')
    })
}
