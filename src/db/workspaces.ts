import type { Queryable } from './client.js'

export interface WorkspaceRow { id: string, name: string, workosOrganizationId: string | null, createdAt: Date }

const COLUMNS = 'id, name, workos_organization_id AS "workosOrganizationId", created_at AS "createdAt"'

export async function insertWorkspace (
  q: Queryable,
  workspace: { name: string, workosOrganizationId?: string | null, now: Date }
): Promise<WorkspaceRow> {
  const r = await q.query<WorkspaceRow>(
    `INSERT INTO workspaces (name, workos_organization_id, created_at) VALUES ($1, $2, $3) RETURNING ${COLUMNS}`,
    [workspace.name, workspace.workosOrganizationId ?? null, workspace.now])
  return r.rows[0] as WorkspaceRow
}

export async function findWorkspace (q: Queryable, id: string): Promise<WorkspaceRow | null> {
  const r = await q.query<WorkspaceRow>(`SELECT ${COLUMNS} FROM workspaces WHERE id = $1`, [id])
  return r.rows[0] ?? null
}

export interface WorkspaceSummaryRow extends Pick<WorkspaceRow, 'id' | 'name' | 'createdAt'> {
  invitePolicy: InvitePolicy
  memberCount: number
}

/** The workspace with its invite policy and the number of members the member list shows. */
export async function findWorkspaceSummary (q: Queryable, id: string): Promise<WorkspaceSummaryRow | null> {
  const r = await q.query<WorkspaceSummaryRow>(
    `SELECT w.id, w.name, w.created_at AS "createdAt", w.invite_policy AS "invitePolicy",
       (SELECT count(*)::int FROM users u WHERE u.workspace_id = w.id AND u.status <> 'removed') AS "memberCount"
     FROM workspaces w WHERE w.id = $1`, [id])
  return r.rows[0] ?? null
}

export async function findWorkspaceByOrganization (q: Queryable, organizationId: string): Promise<WorkspaceRow | null> {
  const r = await q.query<WorkspaceRow>(
    `SELECT ${COLUMNS} FROM workspaces WHERE workos_organization_id = $1`, [organizationId]
  )
  return r.rows[0] ?? null
}

/** Whether any workspace exists (a new installation has none until create-admin runs). */
export async function anyWorkspaceExists (q: Queryable): Promise<boolean> {
  const r = await q.query('SELECT 1 FROM workspaces LIMIT 1')
  return r.rows.length > 0
}

/** Who may invite: admins only, members by asking an admin, or members themselves (as members). */
export type InvitePolicy = 'admins' | 'request' | 'members'

export async function findInvitePolicy (q: Queryable, workspaceId: string): Promise<InvitePolicy | null> {
  const r = await q.query<{ invitePolicy: InvitePolicy }>(
    'SELECT invite_policy AS "invitePolicy" FROM workspaces WHERE id = $1', [workspaceId])
  return r.rows[0]?.invitePolicy ?? null
}

/** Sets the policy; returns the one it replaced (null: no such workspace). */
export async function updateInvitePolicy (
  q: Queryable,
  workspaceId: string,
  policy: InvitePolicy
): Promise<InvitePolicy | null> {
  const r = await q.query<{ previous: InvitePolicy }>(
    `UPDATE workspaces w SET invite_policy = $2 FROM (SELECT invite_policy FROM workspaces WHERE id = $1 FOR UPDATE) old
      WHERE w.id = $1 RETURNING old.invite_policy AS previous`, [workspaceId, policy])
  return r.rows[0]?.previous ?? null
}

/** Days before expiry a pending invitation is reminded (1–7), or null: reminders off. */
export async function findReminderDays (q: Queryable, workspaceId: string): Promise<number | null | undefined> {
  const r = await q.query<{ days: number | null }>(
    'SELECT reminder_days AS days FROM workspaces WHERE id = $1', [workspaceId]
  )
  return r.rows[0]?.days
}

/** Sets the reminder setting; returns the one it replaced (undefined: no such workspace). */
export async function updateReminderDays (
  q: Queryable, workspaceId: string, days: number | null
): Promise<number | null | undefined> {
  const r = await q.query<{ previous: number | null }>(
    `UPDATE workspaces w SET reminder_days = $2 FROM (SELECT reminder_days FROM workspaces WHERE id = $1 FOR UPDATE) old
      WHERE w.id = $1 RETURNING old.reminder_days AS previous`, [workspaceId, days])
  return r.rows[0]?.previous
}

/** Renames a workspace; returns the name it replaced (null: no such workspace). */
export async function renameWorkspace (q: Queryable, workspaceId: string, name: string): Promise<string | null> {
  const r = await q.query<{ previous: string }>(
    `UPDATE workspaces w SET name = $2 FROM (SELECT name FROM workspaces WHERE id = $1 FOR UPDATE) old
      WHERE w.id = $1 RETURNING old.name AS previous`, [workspaceId, name])
  return r.rows[0]?.previous ?? null
}

/** The company directory's settings of a workspace (SCIM): the admins' group and the welcome e-mail. */
export interface DirectorySettingsRow { adminGroup: string | null, welcomeEmail: boolean }

export async function findDirectorySettings (
  q: Queryable, workspaceId: string
): Promise<DirectorySettingsRow | undefined> {
  const r = await q.query<DirectorySettingsRow>(
    `SELECT directory_admin_group AS "adminGroup", directory_welcome_email AS "welcomeEmail"
       FROM workspaces WHERE id = $1`, [workspaceId])
  return r.rows[0]
}

/** Sets what `change` names; returns the settings it replaced (undefined: no such workspace). */
export async function updateDirectorySettings (
  q: Queryable, workspaceId: string, change: Partial<DirectorySettingsRow>
): Promise<DirectorySettingsRow | undefined> {
  const previous = await q.query<DirectorySettingsRow>(
    `SELECT directory_admin_group AS "adminGroup", directory_welcome_email AS "welcomeEmail"
       FROM workspaces WHERE id = $1 FOR UPDATE`, [workspaceId])
  const before = previous.rows[0]
  if (before === undefined) return undefined
  await q.query(
    'UPDATE workspaces SET directory_admin_group = $2, directory_welcome_email = $3 WHERE id = $1',
    [workspaceId, change.adminGroup !== undefined ? change.adminGroup : before.adminGroup,
      change.welcomeEmail ?? before.welcomeEmail])
  return before
}

/** A workspace's default language (BCP 47) and the IANA time zone its e-mails write dates in (migration 059). */
export interface LanguageSettingsRow { locale: string, timeZone: string }

export async function findLanguageSettings (
  q: Queryable, workspaceId: string
): Promise<LanguageSettingsRow | undefined> {
  const r = await q.query<LanguageSettingsRow>(
    'SELECT locale, time_zone AS "timeZone" FROM workspaces WHERE id = $1', [workspaceId])
  return r.rows[0]
}

/** Sets what `change` names; returns the settings it replaced (undefined: no such workspace). */
export async function updateLanguageSettings (
  q: Queryable, workspaceId: string, change: Partial<LanguageSettingsRow>
): Promise<LanguageSettingsRow | undefined> {
  const r = await q.query<LanguageSettingsRow>(
    `UPDATE workspaces w SET locale = COALESCE($2, old.locale), time_zone = COALESCE($3, old.time_zone)
       FROM (SELECT locale, time_zone FROM workspaces WHERE id = $1 FOR UPDATE) old
      WHERE w.id = $1 RETURNING old.locale, old.time_zone AS "timeZone"`,
    [workspaceId, change.locale ?? null, change.timeZone ?? null])
  return r.rows[0]
}

/** Days the audit trail keeps a record (30 or more), or null: for good. Undefined: no such workspace. */
export async function findAuditRetentionDays (q: Queryable, workspaceId: string): Promise<number | null | undefined> {
  const r = await q.query<{ days: number | null }>(
    'SELECT audit_retention_days AS days FROM workspaces WHERE id = $1', [workspaceId])
  return r.rows[0]?.days
}

/** Sets the audit retention; returns the one it replaced (undefined: no such workspace). */
export async function updateAuditRetentionDays (
  q: Queryable, workspaceId: string, days: number | null
): Promise<number | null | undefined> {
  const r = await q.query<{ previous: number | null }>(
    `UPDATE workspaces w SET audit_retention_days = $2
       FROM (SELECT audit_retention_days FROM workspaces WHERE id = $1 FOR UPDATE) old
      WHERE w.id = $1 RETURNING old.audit_retention_days AS previous`, [workspaceId, days])
  return r.rows[0]?.previous
}

/** The workspaces that keep their audit trail for a limited time, with how long. */
export async function listAuditRetentions (q: Queryable): Promise<Array<{ workspaceId: string, days: number }>> {
  const r = await q.query<{ workspaceId: string, days: number }>(
    `SELECT id AS "workspaceId", audit_retention_days AS days FROM workspaces
      WHERE audit_retention_days IS NOT NULL ORDER BY id`)
  return r.rows
}
