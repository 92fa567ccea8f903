import type { Queryable } from './client.js'
import type { Role, UserStatus } from './users.js'
import { byOwner, pageWithTotal, type RowFilter } from './directory-users.js'

// The directory's groups and who is in them (SCIM Groups). Members are the workspace's members;
// a removed member is in no group (their rows stay until the group changes; reads skip them).

export interface DirectoryGroupRow {
  id: string
  workspaceId: string
  displayName: string
  externalId: string | null
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", display_name AS "displayName", external_id AS "externalId",
  created_at AS "createdAt", updated_at AS "updatedAt"`

/** The attributes a SCIM filter may compare, as SQL over directory_groups `g` (as USER_FILTER_COLUMNS). */
export const GROUP_FILTER_COLUMNS = {
  displayname: { sql: 'display_name', kind: 'ci' },
  externalid: { sql: 'external_id', kind: 'text' },
  id: { sql: 'id', kind: 'uuid' }
} as const

/** The filter `members[value eq "…"]` over group `g`, `param` its value (Entra ID asks who is in a group so). */
export const groupHasMemberSql = (param: string): string =>
  `EXISTS (SELECT 1 FROM directory_group_members m WHERE m.group_id = g.id AND m.user_id::text = lower(${param}))`

/** One page of the workspace's groups in a stable order, and how many match (one statement, as for Users). */
export async function listDirectoryGroups (
  q: Queryable, workspaceId: string, page: { offset: number, limit: number, filter: RowFilter | null }
): Promise<{ rows: DirectoryGroupRow[], total: number }> {
  const where = `g.workspace_id = $1${page.filter !== null ? ` AND ${page.filter.where}` : ''}`
  const params = [workspaceId, ...(page.filter?.params ?? [])]
  return await pageWithTotal<DirectoryGroupRow>(q, {
    select: `SELECT ${COLUMNS}, (SELECT count(*)::int FROM directory_groups g WHERE ${where}) AS total
      FROM directory_groups g WHERE ${where}`,
    count: `SELECT count(*)::int AS n FROM directory_groups g WHERE ${where}`,
    params,
    page
  })
}

export async function findDirectoryGroup (
  q: Queryable, workspaceId: string, id: string, opts: { forUpdate?: boolean } = {}
): Promise<DirectoryGroupRow | null> {
  const r = await q.query<DirectoryGroupRow>(
    `SELECT ${COLUMNS} FROM directory_groups WHERE id = $1 AND workspace_id = $2
      ${opts.forUpdate === true ? 'FOR UPDATE' : ''}`,
    [id, workspaceId])
  return r.rows[0] ?? null
}

/** Whether another group of the workspace has this name (case-insensitively). */
export async function groupNameTaken (
  q: Queryable, workspaceId: string, name: string, exceptId: string | null
): Promise<boolean> {
  const r = await q.query(
    `SELECT 1 FROM directory_groups
      WHERE workspace_id = $1 AND lower(display_name) = lower($2) AND ($3::uuid IS NULL OR id <> $3)`,
    [workspaceId, name, exceptId])
  return r.rows.length > 0
}

export async function insertDirectoryGroup (
  q: Queryable, workspaceId: string, group: { displayName: string, externalId: string | null }, now: Date
): Promise<DirectoryGroupRow> {
  const r = await q.query<DirectoryGroupRow>(
    `INSERT INTO directory_groups (workspace_id, display_name, external_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $4) RETURNING ${COLUMNS}`, [workspaceId, group.displayName, group.externalId, now])
  return r.rows[0] as DirectoryGroupRow
}

export async function updateDirectoryGroup (
  q: Queryable, id: string, group: { displayName: string, externalId: string | null }, now: Date
): Promise<void> {
  await q.query('UPDATE directory_groups SET display_name = $2, external_id = $3, updated_at = $4 WHERE id = $1',
    [id, group.displayName, group.externalId, now])
}

export async function deleteDirectoryGroup (q: Queryable, id: string): Promise<void> {
  await q.query('DELETE FROM directory_groups WHERE id = $1', [id])
}

/** The group's members (not removed) with their addresses, in a stable order. */
export async function groupMembers (q: Queryable, groupId: string): Promise<Array<{ id: string, email: string }>> {
  return (await membersOfGroups(q, [groupId])).get(groupId) ?? []
}

/** The members of each of `groupIds` (as groupMembers): one statement for a page of groups. */
export async function membersOfGroups (
  q: Queryable, groupIds: readonly string[]
): Promise<Map<string, Array<{ id: string, email: string }>>> {
  if (groupIds.length === 0) return new Map()
  const r = await q.query<{ owner: string, id: string, email: string }>(
    `SELECT m.group_id AS owner, u.id, u.email FROM directory_group_members m JOIN users u ON u.id = m.user_id
      WHERE m.group_id = ANY ($1::uuid[]) AND u.status <> 'removed' ORDER BY u.created_at, u.id`, [groupIds])
  return byOwner(groupIds, r.rows)
}

/** Of `ids`, those that are members (not removed) of the workspace. */
export async function existingMembers (q: Queryable, workspaceId: string, ids: readonly string[]): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    "SELECT id FROM users WHERE workspace_id = $1 AND status <> 'removed' AND id = ANY ($2::uuid[])",
    [workspaceId, ids])
  return r.rows.map(row => row.id)
}

/** Makes the group's members exactly `userIds`. */
export async function setGroupMembers (q: Queryable, groupId: string, userIds: readonly string[]): Promise<void> {
  await q.query(
    'DELETE FROM directory_group_members WHERE group_id = $1 AND NOT (user_id = ANY ($2::uuid[]))', [groupId, userIds])
  await q.query(
    `INSERT INTO directory_group_members (group_id, user_id) SELECT $1, unnest($2::uuid[])
     ON CONFLICT DO NOTHING`, [groupId, userIds])
}

interface ManagedRole {
  id: string
  email: string
  role: Role
  status: UserStatus
  /** The role the admins' group gives. */
  wanted: Role
  adminGroup: string | null
}

/** For each of `userIds`: its role, status, and the role the admins' group gives it (directory-managed only). */
export async function directoryManagedRoles (
  q: Queryable, workspaceId: string, userIds: readonly string[]
): Promise<ManagedRole[]> {
  const r = await q.query<ManagedRole>(
    `SELECT u.id, u.email, u.role, u.status, w.directory_admin_group AS "adminGroup",
            CASE WHEN EXISTS (
              SELECT 1 FROM directory_group_members m JOIN directory_groups g ON g.id = m.group_id
               WHERE m.user_id = u.id AND g.workspace_id = u.workspace_id
                 AND lower(g.display_name) = lower(w.directory_admin_group)
            ) THEN 'admin' ELSE 'member' END AS wanted
       FROM users u JOIN workspaces w ON w.id = u.workspace_id
      WHERE u.workspace_id = $1 AND u.id = ANY ($2::uuid[]) AND u.status <> 'removed'
        AND u.directory_linked_at IS NOT NULL AND w.directory_admin_group IS NOT NULL
      ORDER BY u.id`,
    [workspaceId, userIds])
  return r.rows
}
