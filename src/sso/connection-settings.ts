import { X509Certificate } from 'node:crypto'
import { isIP } from 'node:net'
import type { Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import { serviceError, type ErrorCode, type ServiceError } from '../errors.js'
import { findDomainsServedElsewhere, findVerifiedDomainsByName } from '../db/sso-connections.js'
import type { SsoConnectionDeps } from './connection-context.js'
import { providerFetchOptions } from './oidc-fetch.js'
import { fetchIdpMetadata, MetadataUnavailable } from './saml-metadata-fetch.js'

// The checks a connection's settings pass before they are stored, each naming the field it
// refuses (details: in, field): the issuer (Entra ID's tenant pinned, never a
// multi-tenant endpoint), the URLs the service will fetch (the webhooks' address policy; a SAML
// metadata URL fetched once, so the admin learns now that it does not answer), the IdP's
// certificates (each must parse), and the domains (verified, the workspace's own, and served by
// no other connection).

/** 400 VALIDATION_FAILED for one body field, as the validator words it. */
export function invalidField (field: string, message: string): ServiceError {
  return serviceError('VALIDATION_FAILED', [`body.${field} ${message}`], { errors: [{ in: 'body', field, message }] })
}

/** A 4xx of the registry about one body field, which `details` names (`in`, `field`) for a form. */
function refused (code: ErrorCode, args: string[], field: string): ServiceError {
  return serviceError(code, args, { in: 'body', field })
}

// Entra ID's hosts: an issuer there names its tenant in the first path segment.
const ENTRA_HOSTS: ReadonlySet<string> = new Set(['login.microsoftonline.com', 'sts.windows.net'])
// Endpoints that accept a token of any tenant (or any personal account): never an issuer to pin.
const MULTI_TENANT: ReadonlySet<string> = new Set(['common', 'organizations', 'consumers'])
const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '::1'])

/**
 * A URL the service fetches (OIDC discovery, SAML metadata): https, and an address the webhooks'
 * policy allows (or a host in SSO_ALLOWED_HOSTS). Plain http only to loopback, and only where
 * the policy allows private addresses (APP_ENV=local).
 */
export async function checkFetchedUrl (
  deps: Pick<SsoConnectionDeps, 'policy'>, field: string, url: string
): Promise<void> {
  const parsed = new URL(url)
  const host = parsed.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  const loopback = LOOPBACK_NAMES.has(host) || (isIP(host) === 4 && host.startsWith('127.'))
  const why = parsed.protocol === 'http:' && !loopback ? 'it must use https' : await deps.policy.check(parsed)
  if (why !== null) throw refused('SSO_URL_NOT_ALLOWED', [why], field)
}

/**
 * A SAML metadata URL fetched once as sign-in fetches it (deadline, size cap, address policy):
 * SSO_METADATA_UNAVAILABLE saying what failed (a status, the deadline, not metadata, no
 * HTTP-Redirect endpoint) when it cannot serve a sign-in.
 */
export async function checkMetadataUrl (deps: Pick<SsoConnectionDeps, 'config'>, url: string): Promise<void> {
  try {
    await fetchIdpMetadata(url, providerFetchOptions(deps.config))
  } catch (err) {
    if (err instanceof MetadataUnavailable) throw refused('SSO_METADATA_UNAVAILABLE', [err.why], 'saml.idpMetadataUrl')
    throw err
  }
}

/** The issuer as an OIDC connection may pin it, with Entra ID's tenant; SSO_ISSUER_NOT_ALLOWED otherwise. */
export function checkIssuer (issuer: string, tenantId: string | null): void {
  const url = new URL(issuer)
  const refuse = (why: string, field = 'oidc.issuer'): never => {
    throw refused('SSO_ISSUER_NOT_ALLOWED', [why], field)
  }
  if (/\{tenant(id)?\}|%7btenant(id)?%7d/i.test(issuer)) {
    refuse('it holds a {tenantid} placeholder; use the issuer of your own tenant')
  }
  if (!ENTRA_HOSTS.has(url.hostname.toLowerCase())) return
  const tenant = url.pathname.split('/').filter(s => s !== '')[0]?.toLowerCase() ?? ''
  if (MULTI_TENANT.has(tenant)) {
    refuse(`a multi-tenant issuer (/${tenant}/) accepts any tenant; use https://login.microsoftonline.com/<tenant id>/v2.0`)
  }
  if (tenantId === null) refuse('an Entra ID issuer needs the tenant id it names (tenantId)', 'oidc.tenantId')
  if (tenant !== tenantId?.toLowerCase()) {
    refuse(`the issuer names tenant ${tenant === '' ? '(none)' : tenant}, not ${tenantId ?? ''}`, 'oidc.tenantId')
  }
}

/** Each PEM parsed as an X.509 certificate, in its canonical PEM; SSO_CERTIFICATE_INVALID otherwise. */
export function parsedCertificates (pems: readonly string[]): string[] {
  return pems.map((pem, i) => {
    try {
      return new X509Certificate(pem).toString()
    } catch {
      const field = `saml.idpCertificates.${i}`
      throw refused('SSO_CERTIFICATE_INVALID', [field, 'does not parse as an X.509 certificate'], field)
    }
  })
}

/**
 * The ids of the workspace's verified domains named, when none is served by another connection
 * than `connectionId`: SSO_DOMAIN_NOT_VERIFIED (422) for a name that is not one (unknown, pending,
 * another workspace's), SSO_DOMAIN_TAKEN (409) for one another connection serves.
 */
export async function servedDomainIds (
  q: Queryable, actor: Principal, connectionId: string, names: readonly string[]
): Promise<string[]> {
  const wanted = [...new Set(names.map(n => n.toLowerCase().replace(/\.$/, '')))]
  const found = await findVerifiedDomainsByName(q, actor.workspaceId, wanted)
  const missing = wanted.find(n => !found.some(d => d.domain === n))
  if (missing !== undefined) {
    throw refused('SSO_DOMAIN_NOT_VERIFIED', [missing], 'domains')
  }
  const ids = found.map(d => d.id)
  const taken = (await findDomainsServedElsewhere(q, ids, connectionId))[0]
  if (taken !== undefined) throw domainTaken(taken.domain, taken.connectionName)
  return ids
}

export function domainTaken (domain: string, connectionName: string): ServiceError {
  return refused('SSO_DOMAIN_TAKEN', [domain, connectionName], 'domains')
}
