import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'
import type { Role } from './users.js'

export type SessionMethod = 'signup' | 'login_link' | 'identity_provider'

/**
 * A session for an active user; null when the user is not active (suspended or removed). The
 * user's row is locked (FOR SHARE) until the caller's transaction ends, so a suspension or removal
 * either waits and then revokes this session with the others, or went first and none is made: a
 * session never outlives a suspension it raced.
 */
export async function insertSession (
  q: Queryable,
  session: { userId: string, method: SessionMethod, now: Date, expiresAt: Date }
): Promise<{ id: string } | null> {
  const r = await q.query<{ id: string }>(
    `INSERT INTO sessions (user_id, method, created_at, expires_at)
     SELECT id, $2, $3, $4 FROM users WHERE id = $1 AND status = 'active' FOR SHARE
     RETURNING id`,
    [session.userId, session.method, session.now, session.expiresAt])
  return r.rows[0] ?? null
}

export interface ActiveSession {
  sessionId: string
  userId: string
  workspaceId: string
  email: string
  name: string | null
  role: Role
}

/** The session and its user, only if the session is live and the user active: one indexed lookup. */
export async function findActiveSession (q: Queryable, sessionId: string, now: Date): Promise<ActiveSession | null> {
  const r = await q.query<ActiveSession>(
    `SELECT s.id AS "sessionId", u.id AS "userId", u.workspace_id AS "workspaceId", u.email, u.name, u.role
       FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > $2 AND u.status = 'active'`,
    [sessionId, now])
  return r.rows[0] ?? null
}

export async function revokeSession (q: Queryable, sessionId: string, now: Date): Promise<boolean> {
  const r = await q.query('UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [sessionId, now])
  return r.rowCount > 0
}

export async function revokeUserSessions (q: Queryable, userId: string, now: Date): Promise<number> {
  const r = await q.query(
    'UPDATE sessions SET revoked_at = $2 WHERE user_id = $1 AND revoked_at IS NULL', [userId, now]
  )
  return r.rowCount
}

/** Housekeeping: up to `limit` sessions that expired, or were revoked, before `before`. */
export async function deleteEndedSessions (q: Queryable, before: Date, limit: number): Promise<number> {
  const where = 'expires_at < $1 OR revoked_at < $1'
  return await deleteBatch(q, { table: 'sessions', key: 'id', where }, before, limit)
}
