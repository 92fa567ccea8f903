import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'

// OAuth `state` values for browser redirect flows (identity-provider login, Slack install).
// The browser holds the state in an HttpOnly cookie; the database holds only its hash, what it
// is bound to, and whether it was used: single use and expiry are enforced here.

export type OAuthStateKind = 'identity_provider' | 'slack'

export interface OAuthStateRow {
  kind: OAuthStateKind,
  workspaceId: string | null,
  userId: string | null,
  expiresAt: Date
}

export async function insertOAuthState (
  q: Queryable,
  state: {
    stateHash: string,
    kind: OAuthStateKind,
    workspaceId: string | null,
    userId: string | null,
    expiresAt: Date,
    now: Date
  }
): Promise<void> {
  await q.query(
    `INSERT INTO oauth_states (state_hash, kind, workspace_id, user_id, expires_at, created_at)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [state.stateHash, state.kind, state.workspaceId, state.userId, state.expiresAt, state.now])
}

/**
 * Consume a state: returns what it was bound to if it exists, is of this kind, unused and not
 * expired, and marks it used in the same statement (a replay finds it used). Otherwise
 * `{ reason }` says why, for the error message.
 */
export async function consumeOAuthState (
  q: Queryable, stateHash: string, kind: OAuthStateKind, now: Date
): Promise<OAuthStateRow | { reason: 'unknown' | 'used' | 'expired' }> {
  const r = await q.query<OAuthStateRow>(
    `UPDATE oauth_states SET used_at = $3
      WHERE state_hash = $1 AND kind = $2 AND used_at IS NULL AND expires_at > $3
      RETURNING kind, workspace_id AS "workspaceId", user_id AS "userId", expires_at AS "expiresAt"`,
    [stateHash, kind, now])
  if (r.rows[0] !== undefined) return r.rows[0]
  const seen = await q.query<{ usedAt: Date | null }>(
    'SELECT used_at AS "usedAt" FROM oauth_states WHERE state_hash = $1 AND kind = $2', [stateHash, kind]
  )
  const row = seen.rows[0]
  if (row === undefined) return { reason: 'unknown' }
  return { reason: row.usedAt !== null ? 'used' : 'expired' }
}

/** Housekeeping: up to `limit` states that expired before `before` (used or not: either way dead). */
export async function deleteExpiredOAuthStates (q: Queryable, before: Date, limit: number): Promise<number> {
  return await deleteBatch(q, { table: 'oauth_states', key: 'state_hash', where: 'expires_at < $1' }, before, limit)
}
