import type { Queryable } from './client.js'
import type { UserStatus } from './users.js'

// Who signed in through a connection: (connection, issuer, subject) → a member. Never an e-mail.

export interface LinkedIdentity {
  id: string
  userId: string
  email: string
  workspaceId: string
  status: UserStatus
}

export async function findSsoIdentity (
  q: Queryable, key: { connectionId: string, issuer: string, subject: string }
): Promise<LinkedIdentity | null> {
  const r = await q.query<LinkedIdentity>(
    `SELECT i.id, i.user_id AS "userId", u.email, u.workspace_id AS "workspaceId", u.status
       FROM sso_identities i JOIN users u ON u.id = i.user_id
      WHERE i.connection_id = $1 AND i.issuer = $2 AND i.subject = $3`,
    [key.connectionId, key.issuer, key.subject])
  return r.rows[0] ?? null
}

export async function insertSsoIdentity (
  q: Queryable, i: { connectionId: string, issuer: string, subject: string, userId: string, now: Date }
): Promise<void> {
  await q.query(
    `INSERT INTO sso_identities (connection_id, issuer, subject, user_id, created_at, last_sign_in_at)
     VALUES ($1, $2, $3, $4, $5, $5)`, [i.connectionId, i.issuer, i.subject, i.userId, i.now])
}

export async function touchSsoIdentity (q: Queryable, id: string, now: Date): Promise<void> {
  await q.query('UPDATE sso_identities SET last_sign_in_at = $2 WHERE id = $1', [id, now])
}
