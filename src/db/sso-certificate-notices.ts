import type { Queryable } from './client.js'

// The certificate expiry notices of SAML connections (migration 056): the connections' pinned
// certificates, read a page at a time by the sweep, and one row per certificate and stage told.

export interface PinnedCertificatesRow {
  id: string
  workspaceId: string
  name: string
  certificates: string[]
}

/** SAML connections after `afterId` (by id), with their pinned certificates: the sweep's page. */
export async function listPinnedCertificates (
  q: Queryable, afterId: string | null, limit: number
): Promise<PinnedCertificatesRow[]> {
  const r = await q.query<PinnedCertificatesRow>(
    `SELECT id, workspace_id AS "workspaceId", name, saml_idp_certificates AS certificates
       FROM sso_connections
      WHERE protocol = 'saml' AND ($1::uuid IS NULL OR id > $1::uuid)
      ORDER BY id LIMIT $2`, [afterId, limit])
  return r.rows
}

/** Records that `stage` was told for this certificate; false when it had been (told once, on every instance). */
export async function recordCertificateNotice (
  q: Queryable, n: { connectionId: string, fingerprint: string, stage: number, now: Date }
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO sso_certificate_notices (connection_id, fingerprint, stage, noticed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`, [n.connectionId, n.fingerprint, n.stage, n.now])
  return (r.rowCount ?? 0) === 1
}
