import type { Queryable } from './client.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'

// A workspace's single sign-on connections (OpenID Connect or SAML 2.0) and the verified domains
// each serves. A domain serves at most one connection: sso_connection_domains is keyed by the
// domain, so a second claim is a unique violation.

export type SsoProtocol = 'oidc' | 'saml'
type SsoAccounts = 'existing' | 'create'

export interface OidcColumns {
  issuer: string
  clientId: string
  /** Sealed (src/sso/connection-secret.ts), never the plaintext. */
  clientSecretEnc: string
  tenantId: string | null
}

export interface SamlColumns {
  metadataUrl: string | null
  metadataXml: string | null
  certificates: string[]
  entityId: string | null
  ssoUrl: string | null
  /** An IdP-initiated response starts a fresh SP-initiated sign-in (else it is refused). */
  idpInitiated: boolean
}

/** What an admin sets: everything but the id, the workspace, the protocol and the times. */
export interface SsoConnectionFields {
  name: string
  accounts: SsoAccounts
  defaultRole: 'admin' | 'member' | null
  required: boolean
  oidc: OidcColumns | null
  saml: SamlColumns | null
}

export interface SsoConnectionRow extends SsoConnectionFields {
  id: string
  workspaceId: string
  protocol: SsoProtocol
  /** The names of the domains it serves, in order: verified ones only (a domain that lost its
   * verification is served again once verified again; its start and its links refuse meanwhile). */
  domains: string[]
  createdAt: Date
  updatedAt: Date
}

interface FlatRow {
  id: string
  workspaceId: string
  name: string
  protocol: SsoProtocol
  accounts: SsoAccounts
  defaultRole: 'admin' | 'member' | null
  required: boolean
  oidcIssuer: string | null
  oidcClientId: string | null
  oidcClientSecretEnc: string | null
  oidcTenantId: string | null
  samlMetadataUrl: string | null
  samlMetadataXml: string | null
  samlCertificates: string[] | null
  samlEntityId: string | null
  samlSsoUrl: string | null
  samlIdpInitiated: boolean
  domains: string[]
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `c.id, c.workspace_id AS "workspaceId", c.name, c.protocol, c.accounts, c.default_role AS "defaultRole",
  c.required, c.oidc_issuer AS "oidcIssuer", c.oidc_client_id AS "oidcClientId",
  c.oidc_client_secret_enc AS "oidcClientSecretEnc", c.oidc_tenant_id AS "oidcTenantId",
  c.saml_idp_metadata_url AS "samlMetadataUrl", c.saml_idp_metadata_xml AS "samlMetadataXml",
  c.saml_idp_certificates AS "samlCertificates", c.saml_idp_entity_id AS "samlEntityId",
  c.saml_idp_sso_url AS "samlSsoUrl", c.saml_idp_initiated AS "samlIdpInitiated",
  ARRAY(SELECT d.domain FROM sso_connection_domains cd JOIN workspace_domains d ON d.id = cd.domain_id
         WHERE cd.connection_id = c.id AND d.status = 'verified' ORDER BY d.domain) AS domains,
  c.created_at AS "createdAt", c.updated_at AS "updatedAt"`

function rowOf (r: FlatRow): SsoConnectionRow {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    name: r.name,
    protocol: r.protocol,
    accounts: r.accounts,
    defaultRole: r.defaultRole,
    required: r.required,
    oidc: r.oidcIssuer === null || r.oidcClientId === null || r.oidcClientSecretEnc === null
      ? null
      : {
          issuer: r.oidcIssuer,
          clientId: r.oidcClientId,
          clientSecretEnc: r.oidcClientSecretEnc,
          tenantId: r.oidcTenantId
        },
    saml: r.samlCertificates === null
      ? null
      : {
          metadataUrl: r.samlMetadataUrl,
          metadataXml: r.samlMetadataXml,
          certificates: r.samlCertificates,
          entityId: r.samlEntityId,
          ssoUrl: r.samlSsoUrl,
          idpInitiated: r.samlIdpInitiated
        },
    domains: r.domains,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt
  }
}

/** The settable columns in statement order ($3 … $15), after the id and workspace id. */
function settable (f: SsoConnectionFields): unknown[] {
  return [
    f.name, f.accounts, f.defaultRole, f.required,
    f.oidc?.issuer ?? null, f.oidc?.clientId ?? null, f.oidc?.clientSecretEnc ?? null, f.oidc?.tenantId ?? null,
    f.saml?.metadataUrl ?? null, f.saml?.metadataXml ?? null, f.saml?.certificates ?? null,
    f.saml?.entityId ?? null, f.saml?.ssoUrl ?? null
  ]
}

export async function insertSsoConnection (q: Queryable, c: SsoConnectionFields & {
  id: string, workspaceId: string, protocol: SsoProtocol, createdBy: string | null, now: Date
}): Promise<void> {
  await q.query(
    `INSERT INTO sso_connections (id, workspace_id, name, accounts, default_role, required, oidc_issuer, oidc_client_id,
        oidc_client_secret_enc, oidc_tenant_id, saml_idp_metadata_url, saml_idp_metadata_xml, saml_idp_certificates,
        saml_idp_entity_id, saml_idp_sso_url, protocol, created_by, created_at, updated_at, saml_idp_initiated)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18, $19)`,
    [c.id, c.workspaceId, ...settable(c), c.protocol, c.createdBy, c.now, c.saml?.idpInitiated ?? false])
}

/** Writes every settable column; false when the connection is not the workspace's. */
export async function updateSsoConnection (
  q: Queryable, workspaceId: string, id: string, f: SsoConnectionFields, now: Date
): Promise<boolean> {
  const r = await q.query(
    `UPDATE sso_connections SET name = $3, accounts = $4, default_role = $5, required = $6, oidc_issuer = $7,
        oidc_client_id = $8, oidc_client_secret_enc = $9, oidc_tenant_id = $10, saml_idp_metadata_url = $11,
        saml_idp_metadata_xml = $12, saml_idp_certificates = $13, saml_idp_entity_id = $14, saml_idp_sso_url = $15,
        updated_at = $16, saml_idp_initiated = $17
      WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, ...settable(f), now, f.saml?.idpInitiated ?? false])
  return r.rowCount > 0
}

export async function findSsoConnection (
  q: Queryable, workspaceId: string, id: string, opts: { forUpdate?: boolean } = {}
): Promise<SsoConnectionRow | null> {
  const r = await q.query<FlatRow>(
    `SELECT ${COLUMNS} FROM sso_connections c WHERE c.workspace_id = $1 AND c.id = $2` +
      (opts.forUpdate === true ? ' FOR UPDATE OF c' : ''), [workspaceId, id])
  const row = r.rows[0]
  return row === undefined ? null : rowOf(row)
}

export async function listSsoConnections (q: Queryable, workspaceId: string): Promise<SsoConnectionRow[]> {
  const r = await q.query<FlatRow>(
    `SELECT ${COLUMNS} FROM sso_connections c WHERE c.workspace_id = $1 ORDER BY c.created_at, c.id`, [workspaceId])
  return r.rows.map(rowOf)
}

/** The connection's name when it was deleted; null when the workspace has no such connection. */
export async function deleteSsoConnection (q: Queryable, workspaceId: string, id: string): Promise<string | null> {
  const r = await q.query<{ name: string }>(
    'DELETE FROM sso_connections WHERE workspace_id = $1 AND id = $2 RETURNING name', [workspaceId, id])
  return r.rows[0]?.name ?? null
}

/** Of the names given, the workspace's verified domains (id and name). */
export async function findVerifiedDomainsByName (
  q: Queryable, workspaceId: string, names: readonly string[]
): Promise<Array<{ id: string, domain: string }>> {
  const r = await q.query<{ id: string, domain: string }>(
    `SELECT id, domain FROM workspace_domains
      WHERE workspace_id = $1 AND status = 'verified' AND domain = ANY($2::text[])`, [workspaceId, [...names]])
  return r.rows
}

/** Of the domains given, those another connection than `connectionId` serves, with its name. */
export async function findDomainsServedElsewhere (
  q: Queryable, domainIds: readonly string[], connectionId: string
): Promise<Array<{ domain: string, connectionName: string }>> {
  const r = await q.query<{ domain: string, connectionName: string }>(
    `SELECT d.domain, c.name AS "connectionName" FROM sso_connection_domains cd
       JOIN workspace_domains d ON d.id = cd.domain_id JOIN sso_connections c ON c.id = cd.connection_id
      WHERE cd.domain_id = ANY($1::uuid[]) AND cd.connection_id <> $2 ORDER BY d.domain`,
    [[...domainIds], connectionId])
  return r.rows
}

/** The connection serves exactly these domains (a unique violation when another serves one). */
export async function setConnectionDomains (
  q: Queryable, connectionId: string, domainIds: readonly string[]
): Promise<void> {
  await q.query('DELETE FROM sso_connection_domains WHERE connection_id = $1 AND NOT domain_id = ANY($2::uuid[])',
    [connectionId, [...domainIds]])
  await q.query(
    `INSERT INTO sso_connection_domains (domain_id, connection_id)
     SELECT x, $1 FROM unnest($2::uuid[]) x
      WHERE NOT EXISTS (SELECT 1 FROM sso_connection_domains WHERE domain_id = x AND connection_id = $1)`,
    [connectionId, [...domainIds]])
}

/** A connection's sealed client secret, for re-encryption (src/lib/reseal.ts). */
export type SealedClientSecret = SealedRow<string, 'clientSecretEnc'>

/** Connections with a sealed secret, in id order after `after` (a page of `limit`). */
export async function listSealedClientSecrets (
  q: Queryable, after: string | null, limit: number
): Promise<SealedClientSecret[]> {
  const r = await q.query<{ id: string, clientSecretEnc: string }>(
    `SELECT id, oidc_client_secret_enc AS "clientSecretEnc" FROM sso_connections
      WHERE id > $1 AND oidc_client_secret_enc IS NOT NULL ORDER BY id LIMIT $2`,
    [after ?? '00000000-0000-0000-0000-000000000000', limit])
  return r.rows.map(({ id, ...values }) => ({ id, values }))
}

/** Replaces a sealed client secret if the row still holds `from`; false otherwise. */
export async function resealClientSecret (q: Queryable, id: string, from: string, to: string): Promise<boolean> {
  return await replaceSealed(q, { table: 'sso_connections', key: 'id', id: [id] }, 'oidc_client_secret_enc', from, to)
}

/** The connection serving the verified domain `domain` (any workspace), or null. */
export async function findSsoConnectionByDomain (q: Queryable, domain: string): Promise<SsoConnectionRow | null> {
  const r = await q.query<FlatRow>(
    `SELECT ${COLUMNS} FROM sso_connections c
       JOIN sso_connection_domains cd ON cd.connection_id = c.id
       JOIN workspace_domains wd ON wd.id = cd.domain_id
      WHERE wd.domain = $1 AND wd.status = 'verified'`, [domain])
  const row = r.rows[0]
  return row === undefined ? null : rowOf(row)
}

/** A connection by id alone (the sign-in flow's, the SAML endpoints' path), or null. */
export async function findSsoConnectionById (q: Queryable, id: string): Promise<SsoConnectionRow | null> {
  const r = await q.query<FlatRow>(`SELECT ${COLUMNS} FROM sso_connections c WHERE c.id = $1`, [id])
  const row = r.rows[0]
  return row === undefined ? null : rowOf(row)
}

/** A connection that requires sign-in by SSO for a verified domain, with its workspace's name. */
export interface SsoRequirementRow {
  connectionId: string
  connectionName: string
  workspaceId: string
  workspaceName: string
}

/**
 * The connection requiring SSO for `domain` (a verified domain: at most one workspace holds it,
 * and it serves at most one connection), or null when none does.
 */
export async function findRequiredConnectionByDomain (q: Queryable, domain: string): Promise<SsoRequirementRow | null> {
  const r = await q.query<SsoRequirementRow>(
    `SELECT c.id AS "connectionId", c.name AS "connectionName", w.id AS "workspaceId", w.name AS "workspaceName"
       FROM workspace_domains d JOIN sso_connection_domains cd ON cd.domain_id = d.id
       JOIN sso_connections c ON c.id = cd.connection_id JOIN workspaces w ON w.id = c.workspace_id
      WHERE d.domain = $1 AND d.status = 'verified' AND c.required`, [domain])
  return r.rows[0] ?? null
}
