import type { Queryable } from './client.js'
import type { UserRow } from './users.js'

// Members as a company directory sees them (SCIM Users): the member's row plus what the directory
// calls them. userName is the directory's name for a member it provisioned or linked, else their
// address; it is unique in a workspace case-insensitively (users_directory_user_name_key).

/** The member's own columns (src/db/users.ts) and what the directory adds. */
type MemberColumns = 'id' | 'workspaceId' | 'email' | 'name' | 'role' | 'status' | 'createdAt' | 'updatedAt'
export interface DirectoryUserRow extends Pick<UserRow, MemberColumns> {
  userName: string
  externalId: string | null
  givenName: string | null
  familyName: string | null
  /** When the directory provisioned or linked the member; null: not the directory's. */
  linkedAt: Date | null
}

/** The userName expression the unique index is built on (lower() of it). */
const USER_NAME_SQL = 'coalesce(directory_user_name, email)'

const COLUMNS = `id, workspace_id AS "workspaceId", email, name, role, status,
  ${USER_NAME_SQL} AS "userName", directory_external_id AS "externalId", given_name AS "givenName",
  family_name AS "familyName", directory_linked_at AS "linkedAt", created_at AS "createdAt", updated_at AS "updatedAt"`

/** What the directory sets on a member (PUT and PATCH set all of it, as the resource now reads). */
export interface DirectoryAttributes {
  userName: string
  externalId: string | null
  email: string
  name: string | null
  givenName: string | null
  familyName: string | null
}

/**
 * The attributes a SCIM filter may compare (lower-case paths), each as SQL over the users table and
 * how it compares (src/scim/filter.ts): `lower` where the column is stored in lower case.
 */
export const USER_FILTER_COLUMNS = {
  username: { sql: USER_NAME_SQL, kind: 'ci' },
  externalid: { sql: 'directory_external_id', kind: 'text' },
  // Addresses are stored in lower case: `email = $n` is read through the workspace's e-mail index.
  'emails.value': { sql: 'email', kind: 'lower' },
  emails: { sql: 'email', kind: 'lower' },
  // A member has one address, shown as the primary work address.
  'emails.type': { sql: "'work'", kind: 'ci' },
  'emails.primary': { sql: 'TRUE', kind: 'bool' },
  displayname: { sql: 'name', kind: 'ci' },
  'name.givenname': { sql: 'given_name', kind: 'ci' },
  'name.familyname': { sql: 'family_name', kind: 'ci' },
  'name.formatted': { sql: 'name', kind: 'ci' },
  id: { sql: 'id', kind: 'uuid' },
  active: { sql: "status = 'active'", kind: 'bool' }
} as const

/** A filter as a WHERE clause over the users table; its parameters are numbered from $2. */
export interface RowFilter { where: string, params: unknown[] }

/**
 * One page of a workspace's members in a stable order (created_at, id), and how many match in
 * all: one statement. The count is a subquery the database runs only when the page has a row, so
 * a directory's lookup that finds nobody (each person of a first import) costs one index probe,
 * and a long list walks users_workspace_idx in order instead of sorting every match.
 */
export async function listDirectoryUsers (
  q: Queryable, workspaceId: string, page: { offset: number, limit: number, filter: RowFilter | null }
): Promise<{ rows: DirectoryUserRow[], total: number }> {
  const where = `workspace_id = $1 AND status <> 'removed'${page.filter !== null ? ` AND ${page.filter.where}` : ''}`
  const params = [workspaceId, ...(page.filter?.params ?? [])]
  return await pageWithTotal<DirectoryUserRow>(q, {
    select: `SELECT ${COLUMNS}, (SELECT count(*)::int FROM users WHERE ${where}) AS total FROM users WHERE ${where}`,
    count: `SELECT count(*)::int AS n FROM users WHERE ${where}`,
    params,
    page
  })
}

/**
 * A page (`select` with a `total` column, ordered by created_at, id) and the count of all that
 * match. Nothing on a first page means nothing matches; only past the end, or for count=0 (a
 * count only), does the count run alone.
 */
export async function pageWithTotal<R> (
  q: Queryable,
  s: { select: string, count: string, params: unknown[], page: { offset: number, limit: number } }
): Promise<{ rows: R[], total: number }> {
  const n = s.params.length
  if (s.page.limit > 0) {
    const r = await q.query<R & { total: number }>(
      `${s.select} ORDER BY created_at, id LIMIT $${n + 1} OFFSET $${n + 2}`,
      [...s.params, s.page.limit, s.page.offset]
    )
    const first = r.rows[0]
    if (first !== undefined) return { rows: r.rows.map(({ total: _, ...row }) => row as R), total: first.total }
    if (s.page.offset === 0) return { rows: [], total: 0 }
  }
  const c = await q.query<{ n: number }>(s.count, s.params)
  return { rows: [], total: c.rows[0]?.n ?? 0 }
}

export async function findDirectoryUser (
  q: Queryable, workspaceId: string, userId: string, opts: { forUpdate?: boolean } = {}
): Promise<DirectoryUserRow | null> {
  const r = await q.query<DirectoryUserRow>(
    `SELECT ${COLUMNS} FROM users WHERE id = $1 AND workspace_id = $2 AND status <> 'removed'
      ${opts.forUpdate === true ? 'FOR UPDATE' : ''}`,
    [userId, workspaceId])
  return r.rows[0] ?? null
}

/** The member (any workspace, not removed) holding `email`, locked: a create links or refuses it. */
export async function lockUserByEmail (q: Queryable, email: string): Promise<DirectoryUserRow | null> {
  const r = await q.query<DirectoryUserRow>(
    `SELECT ${COLUMNS} FROM users WHERE email = $1 AND status <> 'removed' FOR UPDATE`, [email])
  return r.rows[0] ?? null
}

/** Members of the workspace other than `exceptId` holding this userName (case-insensitively) or externalId. */
export async function findDirectoryClash (
  q: Queryable, workspaceId: string, exceptId: string | null, userName: string, externalId: string | null
): Promise<{ field: 'userName' | 'externalId', value: string } | null> {
  const r = await q.query<{ userName: string, externalId: string | null }>(
    `SELECT ${USER_NAME_SQL} AS "userName", directory_external_id AS "externalId" FROM users
      WHERE workspace_id = $1 AND status <> 'removed' AND ($2::uuid IS NULL OR id <> $2)
        AND (lower(${USER_NAME_SQL}) = lower($3) OR ($4::text IS NOT NULL AND directory_external_id = $4))
      LIMIT 1`,
    [workspaceId, exceptId, userName, externalId])
  const row = r.rows[0]
  if (row === undefined) return null
  return row.userName.toLowerCase() === userName.toLowerCase()
    ? { field: 'userName', value: userName }
    : { field: 'externalId', value: externalId ?? '' }
}

/** A new member the directory provisions (active, role member). */
export async function insertDirectoryUser (
  q: Queryable, workspaceId: string, attrs: DirectoryAttributes, now: Date
): Promise<DirectoryUserRow> {
  const r = await q.query<DirectoryUserRow>(
    `INSERT INTO users (workspace_id, email, name, role, directory_user_name, directory_external_id, given_name,
                        family_name, directory_linked_at, created_at, updated_at)
     VALUES ($1, $2, $3, 'member', $4, $5, $6, $7, $8, $8, $8) RETURNING ${COLUMNS}`,
    [workspaceId, attrs.email, attrs.name, attrs.userName, attrs.externalId, attrs.givenName, attrs.familyName, now])
  return r.rows[0] as DirectoryUserRow
}

/** Sets what the directory says of a member, and marks them the directory's (linked). */
export async function updateDirectoryUser (
  q: Queryable, userId: string, attrs: DirectoryAttributes, now: Date
): Promise<DirectoryUserRow> {
  const r = await q.query<DirectoryUserRow>(
    `UPDATE users SET email = $2, name = $3, directory_user_name = $4, directory_external_id = $5, given_name = $6,
            family_name = $7, directory_linked_at = coalesce(directory_linked_at, $8), updated_at = $8
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [userId, attrs.email, attrs.name, attrs.userName, attrs.externalId, attrs.givenName, attrs.familyName, now])
  return r.rows[0] as DirectoryUserRow
}

/** The groups each of `userIds` is in (for the User resource's read-only `groups`): one statement for a page. */
export async function groupsOfUsers (
  q: Queryable, userIds: readonly string[]
): Promise<Map<string, Array<{ id: string, displayName: string }>>> {
  if (userIds.length === 0) return new Map()
  const r = await q.query<{ owner: string, id: string, displayName: string }>(
    `SELECT m.user_id AS owner, g.id, g.display_name AS "displayName" FROM directory_group_members m
       JOIN directory_groups g ON g.id = m.group_id WHERE m.user_id = ANY ($1::uuid[])
      ORDER BY g.created_at, g.id`, [userIds])
  return byOwner(userIds, r.rows)
}

/** Rows that name their `owner` (a member, a group), in order under each of `owners`; none: []. */
export function byOwner<R extends { owner: string }> (
  owners: readonly string[], rows: readonly R[]
): Map<string, Array<Omit<R, 'owner'>>> {
  const grouped = new Map<string, Array<Omit<R, 'owner'>>>(owners.map(id => [id, []]))
  for (const { owner, ...row } of rows) grouped.get(owner)?.push(row)
  return grouped
}
