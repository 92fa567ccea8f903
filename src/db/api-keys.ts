import type { Queryable } from './client.js'
import type { Role, UserStatus } from './users.js'

export interface ApiKeyRow {
  id: string
  workspaceId: string
  createdBy: string | null
  /** The creator's e-mail, while they are a user. */
  createdByEmail: string | null
  name: string
  /** The key's first characters (`wsk_` + 12), unique: keys are looked up by it. */
  prefix: string
  secretHash: string
  createdAt: Date
  lastUsedAt: Date | null
  revokedAt: Date | null
  /** The contract's ApiKeyScope values the key holds. */
  scopes: string[]
  expiresAt: Date | null
}

const COLUMNS = `id, workspace_id AS "workspaceId", created_by AS "createdBy", name, prefix,
  secret_hash AS "secretHash", created_at AS "createdAt", last_used_at AS "lastUsedAt", revoked_at AS "revokedAt",
  scopes, expires_at AS "expiresAt",
  (SELECT u.email FROM users u WHERE u.id = api_keys.created_by) AS "createdByEmail"`

export async function insertApiKey (
  q: Queryable,
  newKey: {
    workspaceId: string,
    createdBy: string,
    name: string,
    prefix: string,
    secretHash: string,
    now: Date,
    scopes: readonly string[],
    expiresAt: Date | null
  }
): Promise<ApiKeyRow> {
  const r = await q.query<ApiKeyRow>(
    `INSERT INTO api_keys (workspace_id, created_by, name, prefix, secret_hash, created_at, scopes, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [newKey.workspaceId, newKey.createdBy, newKey.name, newKey.prefix, newKey.secretHash, newKey.now,
      newKey.scopes, newKey.expiresAt])
  return r.rows[0] as ApiKeyRow
}

/**
 * The number of live keys of a workspace, with a transaction-scoped lock on the workspace's keys:
 * concurrent creations are serialised, so a cap checked with it holds.
 */
export async function countLiveApiKeysLocked (q: Queryable, workspaceId: string): Promise<number> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || $1, 0))", [workspaceId])
  const r = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL', [workspaceId]
  )
  return r.rows[0]?.n ?? 0
}

/** The workspace's live (not revoked) keys, newest first. A workspace holds few keys: no paging. */
export async function listActiveApiKeys (q: Queryable, workspaceId: string): Promise<ApiKeyRow[]> {
  const r = await q.query<ApiKeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id DESC`,
    [workspaceId])
  return r.rows
}

/** Revokes a live key of this workspace; null when there is none (unknown, foreign or already revoked). */
export async function revokeApiKey (
  q: Queryable, workspaceId: string, id: string, now: Date
): Promise<ApiKeyRow | null> {
  const r = await q.query<ApiKeyRow>(
    `UPDATE api_keys SET revoked_at = $3
      WHERE id = $1 AND workspace_id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    [id, workspaceId, now])
  return r.rows[0] ?? null
}

/** A live key and the user who created it, in one round trip: what authentication needs. */
export interface ApiKeyCredential {
  id: string
  workspaceId: string
  name: string
  secretHash: string
  lastUsedAt: Date | null
  scopes: string[]
  expiresAt: Date | null
  creator: null | {
    id: string,
    workspaceId: string,
    email: string,
    name: string | null,
    role: Role,
    status: UserStatus
  }
}

interface CredentialRow {
  id: string
  workspaceId: string
  keyName: string
  secretHash: string
  lastUsedAt: Date | null
  scopes: string[]
  expiresAt: Date | null
  userId: string | null
  userWorkspaceId: string
  email: string
  name: string | null
  role: Role
  status: UserStatus
}

export async function findLiveApiKeyByPrefix (q: Queryable, prefix: string): Promise<ApiKeyCredential | null> {
  const r = await q.query<CredentialRow>(
    `SELECT k.id, k.workspace_id AS "workspaceId", k.name AS "keyName", k.secret_hash AS "secretHash",
            k.last_used_at AS "lastUsedAt", k.scopes, k.expires_at AS "expiresAt",
            u.id AS "userId", u.workspace_id AS "userWorkspaceId", u.email, u.name, u.role, u.status
       FROM api_keys k LEFT JOIN users u ON u.id = k.created_by
      WHERE k.prefix = $1 AND k.revoked_at IS NULL`,
    [prefix])
  const row = r.rows[0]
  if (row === undefined) return null
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.keyName,
    secretHash: row.secretHash,
    lastUsedAt: row.lastUsedAt,
    scopes: row.scopes,
    expiresAt: row.expiresAt,
    creator: row.userId === null
      ? null
      : {
          id: row.userId,
          workspaceId: row.userWorkspaceId,
          email: row.email,
          name: row.name,
          role: row.role,
          status: row.status
        }
  }
}

/**
 * Records use of a key, at most once per `minIntervalMs`: the condition makes concurrent requests
 * (and several instances) write the row once per interval instead of on every request.
 */
export async function touchApiKey (q: Queryable, id: string, now: Date, minIntervalMs: number): Promise<void> {
  await q.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at <= $3)',
    [id, now, new Date(now.getTime() - minIntervalMs)])
}
