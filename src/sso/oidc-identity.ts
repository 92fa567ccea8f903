import type { IDToken } from 'openid-client'
import { OidcError } from './oidc-errors.js'

// Who the ID token says signed in, and whether the provider vouches for an address. An identity
// is (issuer, subject); the address is only a claim, believed for account linking when the
// provider says it verified it — and each provider says so its own way:
// - Entra ID: `email` is an attribute any tenant admin can set (nOAuth). Only the optional
//   `xms_edov` claim (email domain owner verified) makes it verified; the tenant is pinned and
//   `tid` checked, never the multi-tenant `{tenantid}` issuer template.
// - Google: `email_verified`, and `hd` (the Workspace domain) when the account is a Workspace one.
// - Others (Okta, Keycloak, Auth0, …): `email_verified`.

/** How the connection's provider states verified addresses (and, for Entra, its tenant). */
type OidcProviderKind = 'generic' | 'entra' | 'google'

/** What the relying party needs of a connection (src/sso/connections.ts maps its record to this). */
export interface OidcConnection {
  /** The connection's id: the caches are per connection. */
  id: string
  issuer: string
  clientId: string
  clientSecret: string
  provider: OidcProviderKind
  /** Entra ID: the tenant GUID the connection is pinned to. */
  tenantId?: string | undefined
}

export interface OidcIdentity {
  issuer: string
  subject: string
  email: string | null
  /** Whether the provider says it verified `email` (Entra: `xms_edov`). */
  emailVerified: boolean
  name?: string
  /** Entra ID: the tenant, checked equal to the pinned one. */
  tid?: string
  /** Google: the Workspace domain of the account. */
  hd?: string
}

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Entra ID: the connection names one tenant GUID and its issuer is that tenant's; else tenant_not_pinned. */
export function assertPinnedTenant (connection: OidcConnection): void {
  if (connection.provider !== 'entra') return
  const tenant = connection.tenantId
  if (tenant === undefined || !GUID.test(tenant)) throw new OidcError('tenant_not_pinned')
  if (/\{tenantid\}|%7btenantid%7d/i.test(connection.issuer)) throw new OidcError('tenant_not_pinned')
  let segments: string[]
  try {
    segments = new URL(connection.issuer).pathname.split('/').map(s => s.toLowerCase())
  } catch {
    throw new OidcError('tenant_not_pinned')
  }
  if (!segments.includes(tenant.toLowerCase())) throw new OidcError('tenant_not_pinned')
}

const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

/** The identity in validated ID token claims, after the provider's own checks (Entra: `tid`). */
export function identityFrom (connection: OidcConnection, claims: IDToken): OidcIdentity {
  const identity: OidcIdentity = {
    issuer: claims.iss,
    subject: claims.sub,
    email: text(claims.email) ?? null,
    emailVerified: connection.provider === 'entra'
      ? claims.xms_edov === true
      : claims.email_verified === true || claims.email_verified === 'true'
  }
  const name = text(claims.name)
  if (name !== undefined) identity.name = name
  if (connection.provider === 'entra') {
    const tid = text(claims.tid)
    if (tid === undefined || tid.toLowerCase() !== connection.tenantId?.toLowerCase()) {
      throw new OidcError('tenant_mismatch')
    }
    identity.tid = tid.toLowerCase()
  }
  const hd = text(claims.hd)
  if (connection.provider === 'google' && hd !== undefined) identity.hd = hd.toLowerCase()
  return identity
}

/** Whether the provider vouches that `identity` holds an address at `domain` (for linking an existing member). */
export function vouchesFor (identity: OidcIdentity, domain: string, connection: OidcConnection): boolean {
  if (identity.issuer !== connection.issuer || identity.email === null || !identity.emailVerified) return false
  const wanted = domain.toLowerCase()
  const at = identity.email.lastIndexOf('@')
  if (at < 1 || identity.email.slice(at + 1).toLowerCase() !== wanted) return false
  switch (connection.provider) {
    case 'entra':
      return identity.tid !== undefined && identity.tid === connection.tenantId?.toLowerCase()
    case 'google':
      return identity.hd === wanted
    default:
      return true
  }
}
