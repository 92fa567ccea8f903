import { X509Certificate } from 'node:crypto'
import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import { notFoundIn, type Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import { findSsoConnection, type SsoConnectionRow } from '../db/sso-connections.js'
import type { AddressPolicy } from '../webhooks/address-policy.js'
import type { Keyring } from '../lib/crypto.js'
import { isUuid } from '../lib/uuid.js'

// What the connection operations share (connection-change.ts, connection-settings.ts): their
// dependencies, the view of a row with what the admin pastes into the provider, and the lookup.

type Schemas = components['schemas']
export type SsoConnectionView = Schemas['SsoConnection']

export type SsoConnectionDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'events'> & {
  /** The key the client secrets are sealed with (connection-secret.ts). */
  key: Keyring
  /** The webhooks' address policy with SSO_ALLOWED_HOSTS: where issuer and metadata URLs may point. */
  policy: AddressPolicy
}

/** Where the provider sends people back, the same for every OIDC connection (state names the connection). */
export function oidcRedirectUri (publicUrl: string): string {
  return `${publicUrl}/api/oauth/sso/callback`
}

/** This connection's SAML service-provider endpoints: entity id (= metadata URL) and ACS URL. */
export function samlEndpoints (publicUrl: string, connectionId: string): { spEntityId: string, acsUrl: string } {
  const base = `${publicUrl}/api/sso/connections/${connectionId}/saml`
  return { spEntityId: `${base}/metadata`, acsUrl: `${base}/acs` }
}

function certificateView (pem: string): Schemas['SsoCertificate'] {
  const c = new X509Certificate(pem)
  return {
    pem,
    fingerprintSha256: c.fingerprint256,
    subject: c.subject.replace(/\n/g, ', '),
    notAfter: new Date(c.validTo).toISOString()
  }
}

export function connectionView (publicUrl: string, row: SsoConnectionRow): SsoConnectionView {
  const sp = samlEndpoints(publicUrl, row.id)
  return {
    id: row.id,
    name: row.name,
    protocol: row.protocol,
    domains: row.domains,
    accounts: row.accounts,
    defaultRole: row.defaultRole,
    required: row.required,
    oidc: row.oidc === null
      ? null
      : {
          issuer: row.oidc.issuer,
          clientId: row.oidc.clientId,
          clientSecretSet: true,
          tenantId: row.oidc.tenantId,
          redirectUri: oidcRedirectUri(publicUrl)
        },
    saml: row.saml === null
      ? null
      : {
          idpMetadataUrl: row.saml.metadataUrl,
          idpMetadataXml: row.saml.metadataXml,
          idpCertificates: row.saml.certificates.map(certificateView),
          idpEntityId: row.saml.entityId,
          idpSsoUrl: row.saml.ssoUrl,
          idpInitiated: row.saml.idpInitiated,
          spEntityId: sp.spEntityId,
          acsUrl: sp.acsUrl,
          spMetadataUrl: sp.spEntityId
        },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString()
  }
}

/** The actor's connection `id`, or 404 (another workspace's too); 401 when the workspace is gone. */
export async function connectionOr404 (
  deps: Pick<SsoConnectionDeps, 'db'>, actor: Principal, id: string, opts: { forUpdate?: boolean, q?: Queryable } = {}
): Promise<SsoConnectionRow> {
  const q = opts.q ?? deps.db
  const row = isUuid(id) ? await findSsoConnection(q, actor.workspaceId, id, opts) : null
  if (row === null) throw await notFoundIn(q, actor.workspaceId, 'SSO connection')
  return row
}
