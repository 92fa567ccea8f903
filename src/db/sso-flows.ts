import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'

// The sign-ins a browser started at a connection's provider (src/sso/sign-in.ts): keyed by the
// hash of the state the browser holds, single use and short-lived, as oauth_states are.

export type SsoFlowPurpose = 'sign_in' | 'test'

export interface SsoFlowRow {
  connectionId: string
  purpose: SsoFlowPurpose
  adminId: string | null
  oidcNonce: string | null
  oidcVerifierEnc: string | null
  samlRequestId: string | null
  expiresAt: Date
}

const RETURNED = `connection_id AS "connectionId", purpose, admin_id AS "adminId", oidc_nonce AS "oidcNonce",
  oidc_verifier_enc AS "oidcVerifierEnc", saml_request_id AS "samlRequestId", expires_at AS "expiresAt"`

export async function insertSsoFlow (
  q: Queryable, flow: SsoFlowRow & { stateHash: string, now: Date }
): Promise<void> {
  await q.query(
    `INSERT INTO sso_flows (state_hash, connection_id, purpose, admin_id, oidc_nonce, oidc_verifier_enc,
        saml_request_id, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [flow.stateHash, flow.connectionId, flow.purpose, flow.adminId, flow.oidcNonce, flow.oidcVerifierEnc,
      flow.samlRequestId, flow.expiresAt, flow.now])
}

/**
 * Consumes a flow: what it holds when it exists, is unused and unexpired, marked used in the same
 * statement (a replay finds it used); otherwise `{ reason }` and the connection when the row is known.
 */
export async function consumeSsoFlow (
  q: Queryable, stateHash: string, now: Date
): Promise<SsoFlowRow | { reason: 'unknown' | 'used' | 'expired', connectionId: string | null }> {
  const r = await q.query<SsoFlowRow>(
    `UPDATE sso_flows SET used_at = $2 WHERE state_hash = $1 AND used_at IS NULL AND expires_at > $2
      RETURNING ${RETURNED}`, [stateHash, now])
  if (r.rows[0] !== undefined) return r.rows[0]
  const seen = await findSsoFlowConnection(q, stateHash)
  if (seen === null) return { reason: 'unknown', connectionId: null }
  return { reason: seen.usedAt !== null ? 'used' : 'expired', connectionId: seen.connectionId }
}

/** A flow as stored, used or not (the SAML ACS reads it before the response's checks use it up). */
export async function findSsoFlow (
  q: Queryable, stateHash: string
): Promise<(SsoFlowRow & { usedAt: Date | null }) | null> {
  const r = await q.query<SsoFlowRow & { usedAt: Date | null }>(
    `SELECT ${RETURNED}, used_at AS "usedAt" FROM sso_flows WHERE state_hash = $1`, [stateHash])
  return r.rows[0] ?? null
}

/** The connection a flow belongs to, without using it. */
async function findSsoFlowConnection (
  q: Queryable, stateHash: string
): Promise<{ connectionId: string, usedAt: Date | null } | null> {
  const r = await q.query<{ connectionId: string, usedAt: Date | null }>(
    'SELECT connection_id AS "connectionId", used_at AS "usedAt" FROM sso_flows WHERE state_hash = $1', [stateHash])
  return r.rows[0] ?? null
}

/** Housekeeping: up to `limit` flows that expired before `before` (used or not). */
export async function deleteExpiredSsoFlows (q: Queryable, before: Date, limit: number): Promise<number> {
  return await deleteBatch(q, { table: 'sso_flows', key: 'state_hash', where: 'expires_at < $1' }, before, limit)
}
