import type { Queryable } from './client.js'

/** What a workspace set of its look (PATCH /api/workspace/branding, src/workspaces/branding-service.ts). */
export interface WorkspaceBrandingRow {
  displayName: string | null
  accentColor: string | null
  senderName: string | null
  logoSha256: string | null
  logoMediaType: LogoMediaType | null
}

export type LogoMediaType = 'image/png' | 'image/jpeg' | 'image/webp'

export interface LogoRow { bytes: Buffer, mediaType: LogoMediaType }

const COLUMNS = `display_name AS "displayName", accent_color AS "accentColor", sender_name AS "senderName",
  logo_sha256 AS "logoSha256", logo_media_type AS "logoMediaType"`

const NOTHING_SET: WorkspaceBrandingRow = {
  displayName: null, accentColor: null, senderName: null, logoSha256: null, logoMediaType: null
}

/** The workspace's name and what it set of its look, in one query (null: no such workspace). */
export async function findWorkspaceLook (
  q: Queryable, workspaceId: string
): Promise<(WorkspaceBrandingRow & { name: string, logoSize: number | null }) | null> {
  const r = await q.query<WorkspaceBrandingRow & { name: string, logoSize: number | null }>(
    `SELECT w.name, b.display_name AS "displayName", b.accent_color AS "accentColor", b.sender_name AS "senderName",
       b.logo_sha256 AS "logoSha256", b.logo_media_type AS "logoMediaType", octet_length(b.logo) AS "logoSize"
     FROM workspaces w LEFT JOIN workspace_branding b ON b.workspace_id = w.id WHERE w.id = $1`, [workspaceId])
  return r.rows[0] ?? null
}

/**
 * Sets the fields `change` names (a null clears one) and locks the row; returns what it replaced.
 * The logo is set or cleared with its bytes, hash and media type together.
 */
export async function updateWorkspaceBranding (
  q: Queryable,
  workspaceId: string,
  change: Partial<Omit<WorkspaceBrandingRow, 'logoSha256' | 'logoMediaType'>> & {
    logo?: { bytes: Buffer, sha256: string, mediaType: LogoMediaType } | null
  },
  now: Date
): Promise<WorkspaceBrandingRow> {
  await q.query(
    'INSERT INTO workspace_branding (workspace_id, updated_at) VALUES ($1, $2) ON CONFLICT (workspace_id) DO NOTHING',
    [workspaceId, now])
  const previous = await q.query<WorkspaceBrandingRow>(
    `SELECT ${COLUMNS} FROM workspace_branding WHERE workspace_id = $1 FOR UPDATE`, [workspaceId])
  const before = previous.rows[0] ?? NOTHING_SET
  const sets: string[] = []
  const values: unknown[] = [workspaceId, now]
  const set = (column: string, value: unknown): void => {
    values.push(value)
    sets.push(`${column} = $${values.length}`)
  }
  if (change.displayName !== undefined) set('display_name', change.displayName)
  if (change.accentColor !== undefined) set('accent_color', change.accentColor)
  if (change.senderName !== undefined) set('sender_name', change.senderName)
  if (change.logo !== undefined) {
    set('logo', change.logo?.bytes ?? null)
    set('logo_sha256', change.logo?.sha256 ?? null)
    set('logo_media_type', change.logo?.mediaType ?? null)
  }
  await q.query(`UPDATE workspace_branding SET ${['updated_at = $2', ...sets].join(', ')} WHERE workspace_id = $1`,
    values)
  return before
}

/** A logo some workspace has now, by its hash (null: none has it, or no longer). */
export async function findLogoBySha256 (q: Queryable, sha256: string): Promise<LogoRow | null> {
  const r = await q.query<{ bytes: Uint8Array, mediaType: LogoMediaType }>(
    `SELECT logo AS bytes, logo_media_type AS "mediaType" FROM workspace_branding
      WHERE logo_sha256 = $1 LIMIT 1`, [sha256])
  const row = r.rows[0]
  // node-postgres gives a Buffer, PGlite a Uint8Array.
  return row === undefined ? null : { bytes: Buffer.from(row.bytes), mediaType: row.mediaType }
}
