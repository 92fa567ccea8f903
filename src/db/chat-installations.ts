import { lockClause, type LockOptions, type Queryable } from './client.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'

// Chat-platform installations (the Slack app installed in a Slack team), one per platform + team.
// The bot token is only ever stored encrypted (bot_token_enc, see src/lib/crypto.ts).

export type ChatPlatform = 'slack'

export interface ChatInstallationRow {
  id: string
  workspaceId: string
  platform: ChatPlatform
  teamId: string
  teamName: string | null
  botUserId: string | null
  appId: string | null
  scopes: string
  botTokenEnc: string
  installedBy: string | null
  active: boolean
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", platform, team_id AS "teamId", team_name AS "teamName",
  bot_user_id AS "botUserId", app_id AS "appId", scopes, bot_token_enc AS "botTokenEnc",
  installed_by AS "installedBy", active, created_at AS "createdAt", updated_at AS "updatedAt"`

export type NewChatInstallation = Omit<ChatInstallationRow, 'id' | 'active' | 'createdAt' | 'updatedAt'> & { now: Date }

/** Insert, or update in place on reinstall (UNIQUE(platform, team_id)); the row is active again. */
export async function upsertChatInstallation (
  q: Queryable, installation: NewChatInstallation
): Promise<ChatInstallationRow & { created: boolean }> {
  const r = await q.query<ChatInstallationRow & { created: boolean }>(
    `INSERT INTO chat_installations (workspace_id, platform, team_id, team_name, bot_user_id, app_id, scopes,
                                     bot_token_enc, installed_by, active, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, true, $10, $10)
     ON CONFLICT (platform, team_id) DO UPDATE SET
       workspace_id = EXCLUDED.workspace_id, team_name = EXCLUDED.team_name, bot_user_id = EXCLUDED.bot_user_id,
       app_id = EXCLUDED.app_id, scopes = EXCLUDED.scopes, bot_token_enc = EXCLUDED.bot_token_enc,
       installed_by = EXCLUDED.installed_by, active = true, updated_at = EXCLUDED.updated_at
     RETURNING ${COLUMNS}, (xmax = 0) AS created`,
    [
      installation.workspaceId, installation.platform, installation.teamId, installation.teamName,
      installation.botUserId, installation.appId, installation.scopes, installation.botTokenEnc,
      installation.installedBy, installation.now
    ])
  return r.rows[0] as ChatInstallationRow & { created: boolean }
}

/** The installation of a team, active or not (FOR UPDATE inside a transaction when asked). */
export async function findChatInstallation (
  q: Queryable, platform: ChatPlatform, teamId: string, opts: LockOptions = {}
): Promise<ChatInstallationRow | null> {
  const r = await q.query<ChatInstallationRow>(
    `SELECT ${COLUMNS} FROM chat_installations WHERE platform = $1 AND team_id = $2${lockClause(opts)}`,
    [platform, teamId])
  return r.rows[0] ?? null
}

/** The workspace's active installation on a platform (the newest, should there be several teams). */
export async function findActiveInstallationOfWorkspace (
  q: Queryable,
  platform: ChatPlatform,
  workspaceId: string
): Promise<ChatInstallationRow | null> {
  const r = await q.query<ChatInstallationRow>(
    `SELECT ${COLUMNS} FROM chat_installations WHERE platform = $1 AND workspace_id = $2 AND active
      ORDER BY updated_at DESC LIMIT 1`, [platform, workspaceId])
  return r.rows[0] ?? null
}

/** Deactivate an active installation; returns it when this call changed it (for the audit trail). */
export async function deactivateChatInstallation (
  q: Queryable, platform: ChatPlatform, teamId: string, now: Date
): Promise<ChatInstallationRow | null> {
  const r = await q.query<ChatInstallationRow>(
    `UPDATE chat_installations SET active = false, updated_at = $3
      WHERE platform = $1 AND team_id = $2 AND active RETURNING ${COLUMNS}`,
    [platform, teamId, now])
  return r.rows[0] ?? null
}

/** Delete an installation (its encrypted token with it); returns it when this call deleted it. */
export async function deleteChatInstallation (q: Queryable, id: string): Promise<ChatInstallationRow | null> {
  const r = await q.query<ChatInstallationRow>(
    `DELETE FROM chat_installations WHERE id = $1 RETURNING ${COLUMNS}`, [id])
  return r.rows[0] ?? null
}

/** An installation's sealed bot token, for re-encryption (src/lib/reseal.ts). */
export type SealedBotToken = SealedRow<{ id: string, teamId: string }, 'botTokenEnc'>

/** Installations in id order after `after` (a page of `limit`). */
export async function listSealedBotTokens (
  q: Queryable, after: string | null, limit: number
): Promise<SealedBotToken[]> {
  const r = await q.query<{ id: string, teamId: string, botTokenEnc: string }>(
    `SELECT id, team_id AS "teamId", bot_token_enc AS "botTokenEnc" FROM chat_installations
      WHERE id > $1 ORDER BY id LIMIT $2`,
    [after ?? '00000000-0000-0000-0000-000000000000', limit])
  return r.rows.map(({ id, teamId, botTokenEnc }) => ({ id: { id, teamId }, values: { botTokenEnc } }))
}

/** Replaces a sealed bot token if the row still holds `from`; false otherwise. */
export async function resealBotToken (q: Queryable, id: string, from: string, to: string): Promise<boolean> {
  return await replaceSealed(q, { table: 'chat_installations', key: 'id', id: [id] }, 'bot_token_enc', from, to)
}
