import type { Queryable } from './client.js'

// E-mail addresses arrive here as stored (src/lib/email.ts: every door applies the one rule first;
// the columns' CHECK holds them to lower case).

export type Role = 'admin' | 'member'
export type UserStatus = 'active' | 'suspended' | 'removed'
/** What a member is to the workspace: removed members are gone from every listing. */
export type MemberStatus = Exclude<UserStatus, 'removed'>

export interface UserRow {
  id: string
  workspaceId: string
  email: string
  name: string | null
  role: Role
  status: UserStatus
  workosUserId: string | null
  /** A company directory provisioned or linked the member (SCIM): it manages their status. */
  directoryManaged: boolean
  /** Who suspended a suspended member: an admin, or their directory; null when active (or not known). */
  suspendedBy: SuspendedBy | null
  /** The language they chose for what the service writes them (BCP 47; migration 059); null: the workspace's. */
  locale: string | null
  createdAt: Date
  updatedAt: Date
}

export type SuspendedBy = 'admin' | 'directory'

const COLUMNS = `id, workspace_id AS "workspaceId", email, name, role, status, workos_user_id AS "workosUserId",
  directory_linked_at IS NOT NULL AS "directoryManaged", suspended_by AS "suspendedBy", locale,
  created_at AS "createdAt", updated_at AS "updatedAt"`

export async function insertUser (
  q: Queryable,
  user: { workspaceId: string, email: string, name: string | null, role: Role, workosUserId?: string | null, now: Date }
): Promise<UserRow> {
  const r = await q.query<UserRow>(
    `INSERT INTO users (workspace_id, email, name, role, workos_user_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING ${COLUMNS}`,
    [user.workspaceId, user.email, user.name, user.role, user.workosUserId ?? null, user.now])
  return r.rows[0] as UserRow
}

/** The user (active or suspended, not removed) holding this e-mail anywhere in the service. */
export async function findUserByEmail (q: Queryable, email: string): Promise<UserRow | null> {
  const r = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE email = $1 AND status <> 'removed'`, [email]
  )
  return r.rows[0] ?? null
}

/**
 * The status of the member of this workspace holding the address, or null when it is no member's.
 * Inviting asks only this: a person can hold one account (users.email is unique across
 * workspaces), but whether that account is in another workspace is not the inviter's to learn —
 * their invitation is made and sent as for anyone else, and accepting it fails for that person
 * alone (USER_EXISTS at signup).
 */
export async function memberStatusOf (
  q: Queryable, workspaceId: string, email: string
): Promise<MemberStatus | null> {
  const r = await q.query<{ status: MemberStatus }>(
    'SELECT status FROM users WHERE email = $1 AND workspace_id = $2 AND status <> \'removed\'',
    [email, workspaceId]
  )
  return r.rows[0]?.status ?? null
}

export async function findUserInWorkspace (q: Queryable, workspaceId: string, userId: string): Promise<UserRow | null> {
  const r = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE id = $1 AND workspace_id = $2 AND status <> 'removed'`, [userId, workspaceId]
  )
  return r.rows[0] ?? null
}

/** A LIKE pattern for what begins with `text` (its own %, _ and \\ taken literally). */
function startsWith (text: string): string {
  return `${text.replace(/[\\%_]/g, c => `\\${c}`)}%`
}

/**
 * Members of a workspace, oldest first, keyset-paginated on (created_at, id). `search`: those
 * whose e-mail or name begins with it, case-insensitively (users_workspace_*_prefix_idx);
 * `role`: those of one role; `status`: those active, or those suspended. Each filter adds its
 * clause only when given, so every statement is planned with the index that fits it.
 */
export async function listUsers (
  q: Queryable,
  workspaceId: string,
  page: {
    limit: number,
    after?: { createdAt: Date, id: string } | undefined,
    search?: string | undefined,
    role?: Role | undefined,
    status?: MemberStatus | undefined
  }
): Promise<UserRow[]> {
  const params: unknown[] = [workspaceId, page.limit]
  const where = ['workspace_id = $1', "status <> 'removed'"]
  const param = (v: unknown): string => { params.push(v); return `$${params.length}` }
  if (page.search !== undefined) {
    const like = param(startsWith(page.search.trim().toLowerCase()))
    where.push(`(email LIKE ${like} OR lower(name) LIKE ${like})`)
  }
  if (page.role !== undefined) where.push(`role = ${param(page.role)}`)
  if (page.status !== undefined) where.push(`status = ${param(page.status)}`)
  if (page.after !== undefined) {
    where.push(`(created_at, id) > (${param(page.after.createdAt)}, ${param(page.after.id)})`)
  }
  const r = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE ${where.join(' AND ')} ORDER BY created_at, id LIMIT $2`, params)
  return r.rows
}

export async function updateUserRole (q: Queryable, userId: string, role: Role, now: Date): Promise<UserRow | null> {
  const r = await q.query<UserRow>(
    `UPDATE users SET role = $2, updated_at = $3 WHERE id = $1 RETURNING ${COLUMNS}`, [userId, role, now]
  )
  return r.rows[0] ?? null
}

/** Sets a user's status; suspended_at follows it (the time of suspension, null otherwise). */
export async function setUserStatus (
  q: Queryable, userId: string, status: UserStatus, now: Date, by: SuspendedBy | null = null
): Promise<UserRow | null> {
  const r = await q.query<UserRow>(
    `UPDATE users SET status = $2, updated_at = $3,
            suspended_at = CASE WHEN $2 = 'suspended' THEN $3::timestamptz END,
            suspended_by = CASE WHEN $2 = 'suspended' THEN $4 END
      WHERE id = $1 RETURNING ${COLUMNS}`, [userId, status, now, by])
  return r.rows[0] ?? null
}

export async function setUserWorkosId (q: Queryable, userId: string, workosUserId: string, now: Date): Promise<void> {
  await q.query('UPDATE users SET workos_user_id = $2, updated_at = $3 WHERE id = $1', [userId, workosUserId, now])
}

/**
 * The active admins of a workspace, locked FOR UPDATE in id order (one order for every caller, so
 * two admin changes cannot deadlock). Holding these locks while counting and changing makes the
 * last-admin rule race-safe: a concurrent demotion or removal waits, then sees the new state.
 */
export async function lockActiveAdmins (q: Queryable, workspaceId: string): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    "SELECT id FROM users WHERE workspace_id = $1 AND role = 'admin' AND status = 'active' ORDER BY id FOR UPDATE",
    [workspaceId])
  return r.rows.map(row => row.id)
}

/** A member of the workspace (not removed), its row locked for the rest of the transaction. */
export async function lockUserInWorkspace (q: Queryable, workspaceId: string, userId: string): Promise<UserRow | null> {
  const r = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE id = $1 AND workspace_id = $2 AND status <> 'removed' FOR UPDATE`,
    [userId, workspaceId]
  )
  return r.rows[0] ?? null
}

/**
 * Marks every live API key a user created as revoked; returns how many. It lives here, not in
 * api-keys.ts, because removing a member is a users-table action (src/members) and the api_keys
 * repository belongs to the API-key feature. Authentication also refuses keys whose creator is
 * no longer an active admin; this makes the revocation visible in the key list as well.
 */
export async function revokeApiKeysCreatedBy (q: Queryable, userId: string, now: Date): Promise<number> {
  const r = await q.query(
    // The directory's key (scim alone) belongs to the workspace: it outlives the admin who made it.
    "UPDATE api_keys SET revoked_at = $2 WHERE created_by = $1 AND revoked_at IS NULL AND scopes <> ARRAY['scim']",
    [userId, now]
  )
  return r.rowCount
}

/** The active admins of a workspace (whom an invite request is shown to). */
export async function listActiveAdmins (q: Queryable, workspaceId: string): Promise<UserRow[]> {
  const r = await q.query<UserRow>(
    `SELECT ${COLUMNS} FROM users WHERE workspace_id = $1 AND role = 'admin' AND status = 'active' ORDER BY created_at`,
    [workspaceId])
  return r.rows
}

/** Sets the member's own language (null: the workspace's); false when no such member. */
export async function updateUserLocale (
  q: Queryable, workspaceId: string, userId: string, locale: string | null, now: Date
): Promise<boolean> {
  const r = await q.query(
    'UPDATE users SET locale = $3, updated_at = $4 WHERE id = $2 AND workspace_id = $1',
    [workspaceId, userId, locale, now])
  return r.rowCount === 1
}
