import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'

// One-time login links. The table keeps only the token's hash; single use and expiry are
// enforced by the UPDATE in consumeLoginToken, so two concurrent verifies cannot both win.

export interface LoginTokenUse { userId: string, workspaceId: string }

/**
 * Insert a login token unless the user already received `max` since `since`; returns whether it
 * was inserted. A transaction-scoped advisory lock on the user serialises concurrent requests
 * for one address, so the count cannot be raced past the limit.
 */
export async function insertLoginTokenWithinLimit (
  q: Queryable,
  loginToken: {
    userId: string, tokenHash: string, browserHash: string | null, expiresAt: Date, now: Date, since: Date, max: number
  }
): Promise<boolean> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('login_tokens:' || $1, 0))", [loginToken.userId])
  const r = await q.query(
    `INSERT INTO login_tokens (user_id, token_hash, browser_hash, expires_at, created_at)
     SELECT $1, $2, $7, $3, $4
      WHERE (SELECT count(*) FROM login_tokens WHERE user_id = $1 AND created_at > $5) < $6`,
    [
      loginToken.userId, loginToken.tokenHash, loginToken.expiresAt, loginToken.now, loginToken.since, loginToken.max,
      loginToken.browserHash
    ])
  return r.rowCount === 1
}

/**
 * Use a login token: marks it used and returns its (active) user, or says why it cannot be used.
 * A token of a user who was disabled or removed since is reported as unknown.
 */
export async function consumeLoginToken (
  q: Queryable, tokenHash: string, now: Date
): Promise<LoginTokenUse | { reason: 'unknown' | 'used' | 'expired' }> {
  // The user's row first, as a suspension locks it before it expires their tokens: one lock
  // order, so a sign-in and a suspension of the same person wait for each other, never deadlock.
  await q.query(
    'SELECT 1 FROM login_tokens lt JOIN users u ON u.id = lt.user_id WHERE lt.token_hash = $1 FOR SHARE OF u',
    [tokenHash])
  const r = await q.query<LoginTokenUse>(
    `UPDATE login_tokens lt SET used_at = $2
       FROM users u
      WHERE lt.token_hash = $1 AND lt.used_at IS NULL AND lt.expires_at > $2
        AND u.id = lt.user_id AND u.status = 'active'
      RETURNING u.id AS "userId", u.workspace_id AS "workspaceId"`,
    [tokenHash, now])
  if (r.rows[0] !== undefined) return r.rows[0]
  const seen = await q.query<{ usedAt: Date | null, expiresAt: Date, active: boolean }>(
    `SELECT lt.used_at AS "usedAt", lt.expires_at AS "expiresAt", (u.status = 'active') AS active
       FROM login_tokens lt JOIN users u ON u.id = lt.user_id WHERE lt.token_hash = $1`, [tokenHash])
  const row = seen.rows[0]
  if (row === undefined || !row.active) return { reason: 'unknown' }
  return { reason: row.usedAt !== null ? 'used' : 'expired' }
}

export interface LoginTokenView {
  email: string
  workspace: { id: string, name: string }
  expiresAt: Date
  usedAt: Date | null
  active: boolean
  browserHash: string | null
}

/** A login token as its landing page shows it, without using it; null when the hash is unknown. */
export async function findLoginToken (q: Queryable, tokenHash: string): Promise<LoginTokenView | null> {
  const r = await q.query<Omit<LoginTokenView, 'workspace'> & { workspaceId: string, workspaceName: string }>(
    `SELECT u.email, w.id AS "workspaceId", w.name AS "workspaceName", lt.expires_at AS "expiresAt",
            lt.used_at AS "usedAt", (u.status = 'active') AS active, lt.browser_hash AS "browserHash"
       FROM login_tokens lt JOIN users u ON u.id = lt.user_id JOIN workspaces w ON w.id = u.workspace_id
      WHERE lt.token_hash = $1`, [tokenHash])
  const row = r.rows[0]
  if (row === undefined) return null
  const { workspaceId, workspaceName, ...rest } = row
  return { ...rest, workspace: { id: workspaceId, name: workspaceName } }
}

/** Housekeeping: up to `limit` tokens that expired before `before` (used or not: either way dead). */
export async function deleteExpiredLoginTokens (q: Queryable, before: Date, limit: number): Promise<number> {
  return await deleteBatch(q, { table: 'login_tokens', key: 'id', where: 'expires_at < $1' }, before, limit)
}

/**
 * A suspended member's login links stop at once: those still unused expire now. (Using one also
 * checks that the member is active; this keeps a link sent before a suspension from working
 * after a reactivation.)
 */
export async function expireUserLoginTokens (q: Queryable, userId: string, now: Date): Promise<number> {
  const r = await q.query(
    'UPDATE login_tokens SET expires_at = $2 WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2', [userId, now]
  )
  return r.rowCount
}
