import type { Queryable } from './client.js'

// Invite links and the confirmations e-mailed through them. Codes and confirmation tokens are
// kept as SHA-256 hashes only. A use is counted by one guarded UPDATE (useInviteLink): of
// concurrent confirmations on a link with n uses left exactly n get a row back.

export interface InviteLinkRow {
  id: string
  workspaceId: string
  codeHash: string
  name: string | null
  role: 'member'
  maxUses: number | null
  uses: number
  allowedDomains: string[]
  requiresApproval: boolean
  expiresAt: Date
  createdBy: string | null
  revokedAt: Date | null
  /** The language of its joiners' e-mails as given (BCP 47; migration 059); null: the workspace's. */
  locale: string | null
  createdAt: Date
  updatedAt: Date
}

export type InviteLinkStatus = 'active' | 'expired' | 'used_up' | 'revoked'

const COLUMNS = `id, workspace_id AS "workspaceId", code_hash AS "codeHash", name, role, max_uses AS "maxUses", uses,
  allowed_domains AS "allowedDomains", requires_approval AS "requiresApproval", expires_at AS "expiresAt",
  created_by AS "createdBy", revoked_at AS "revokedAt", locale, created_at AS "createdAt", updated_at AS "updatedAt"`

/** The status as read now. */
export function inviteLinkStatus (row: InviteLinkRow, now: Date): InviteLinkStatus {
  if (row.revokedAt !== null) return 'revoked'
  if (new Date(row.expiresAt) <= now) return 'expired'
  if (row.maxUses !== null && row.uses >= row.maxUses) return 'used_up'
  return 'active'
}

export async function insertInviteLink (
  q: Queryable,
  link: {
    workspaceId: string,
    codeHash: string,
    name: string | null,
    maxUses: number | null,
    allowedDomains: string[],
    requiresApproval: boolean,
    locale: string | null,
    expiresAt: Date,
    createdBy: string,
    now: Date
  }
): Promise<InviteLinkRow> {
  const r = await q.query<InviteLinkRow>(
    `INSERT INTO invite_links (workspace_id, code_hash, role, max_uses, allowed_domains, requires_approval, expires_at,
                               created_by, created_at, updated_at, name, locale)
     VALUES ($1, $2, 'member', $3, $4, $5, $6, $7, $8, $8, $9, $10) RETURNING ${COLUMNS}`,
    [link.workspaceId, link.codeHash, link.maxUses, link.allowedDomains, link.requiresApproval, link.expiresAt,
      link.createdBy, link.now, link.name, link.locale])
  return r.rows[0] as InviteLinkRow
}

/** The link a code names (any state), or null. */
export async function findInviteLinkByCodeHash (q: Queryable, codeHash: string): Promise<InviteLinkRow | null> {
  const r = await q.query<InviteLinkRow>(`SELECT ${COLUMNS} FROM invite_links WHERE code_hash = $1`, [codeHash])
  return r.rows[0] ?? null
}

/** Newest first, keyset-paginated on (created_at, id). */
export async function listInviteLinks (
  q: Queryable,
  filter: { workspaceId: string, limit: number, before?: { createdAt: Date, id: string } | undefined }
): Promise<InviteLinkRow[]> {
  const r = await q.query<InviteLinkRow>(
    `SELECT ${COLUMNS} FROM invite_links
      WHERE workspace_id = $1
        AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $4`,
    [filter.workspaceId, filter.before?.createdAt ?? null, filter.before?.id ?? null, filter.limit])
  return r.rows
}

/** Revoke a live link of the workspace; null when unknown there or revoked already. */
export async function revokeInviteLink (
  q: Queryable, workspaceId: string, id: string, now: Date
): Promise<InviteLinkRow | null> {
  const r = await q.query<InviteLinkRow>(
    `UPDATE invite_links SET revoked_at = $3, updated_at = $3
      WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    [workspaceId, id, now])
  return r.rows[0] ?? null
}

/** A new code for a live link of the workspace (the old hash is gone with this UPDATE); null when none. */
export async function replaceInviteLinkCode (
  q: Queryable, workspaceId: string, id: string, codeHash: string, now: Date
): Promise<InviteLinkRow | null> {
  const r = await q.query<InviteLinkRow>(
    `UPDATE invite_links SET code_hash = $3, updated_at = $4
      WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING ${COLUMNS}`,
    [workspaceId, id, codeHash, now])
  return r.rows[0] ?? null
}

/**
 * Count one use, atomically: only while the link is live and has a use left. Concurrent callers
 * wait on the row's lock and re-check the condition on the row as the winner left it.
 */
export async function useInviteLink (q: Queryable, id: string, now: Date): Promise<InviteLinkRow | null> {
  const r = await q.query<InviteLinkRow>(
    `UPDATE invite_links SET uses = uses + 1, updated_at = $2
      WHERE id = $1 AND (max_uses IS NULL OR uses < max_uses) AND revoked_at IS NULL AND expires_at > $2
      RETURNING ${COLUMNS}`,
    [id, now])
  return r.rows[0] ?? null
}

export interface InviteLinkJoinRow {
  id: string
  linkId: string
  codeHash: string
  email: string
  name: string | null
  expiresAt: Date
  usedAt: Date | null
  /** The hash of the asking browser's secret (migration 038), or null. */
  browserHash: string | null
}

const JOIN_COLUMNS = `id, link_id AS "linkId", code_hash AS "codeHash", email, name, expires_at AS "expiresAt",
  used_at AS "usedAt", browser_hash AS "browserHash"`

/**
 * Record a confirmation unless the link has had `max` since `since`; returns whether it was
 * recorded. An advisory lock on the link serialises concurrent requests, so the count holds.
 */
export async function insertInviteLinkJoinWithinBudget (
  q: Queryable,
  join: {
    linkId: string,
    codeHash: string,
    email: string,
    name: string | null,
    tokenHash: string,
    browserHash: string | null,
    expiresAt: Date,
    now: Date,
    since: Date,
    max: number
  }
): Promise<boolean> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('invite_link_joins:' || $1, 0))", [join.linkId])
  const r = await q.query(
    `INSERT INTO invite_link_joins (link_id, code_hash, email, name, token_hash, expires_at, created_at, browser_hash)
     SELECT $1, $2, $3, $4, $5, $6, $7, $10
      WHERE (SELECT count(*) FROM invite_link_joins WHERE link_id = $1 AND created_at > $8) < $9`,
    [
      join.linkId, join.codeHash, join.email, join.name, join.tokenHash, join.expiresAt, join.now, join.since, join.max,
      join.browserHash
    ])
  return r.rowCount === 1
}

/** When the link's budget frees a place again: its oldest confirmation in the window, plus the window. */
export async function oldestInviteLinkJoinSince (q: Queryable, linkId: string, since: Date): Promise<Date | null> {
  const r = await q.query<{ at: Date | null }>(
    'SELECT min(created_at) AS at FROM invite_link_joins WHERE link_id = $1 AND created_at > $2', [linkId, since])
  return r.rows[0]?.at ?? null
}

/**
 * Use a confirmation made through this link's current code: marks it used, or says why it cannot
 * be (one made through a code since replaced is unknown).
 */
export async function consumeInviteLinkJoin (
  q: Queryable, input: { linkId: string, codeHash: string, tokenHash: string, now: Date }
): Promise<InviteLinkJoinRow | { reason: 'unknown' | 'used' | 'expired' }> {
  const r = await q.query<InviteLinkJoinRow>(
    `UPDATE invite_link_joins SET used_at = $3
      WHERE token_hash = $1 AND link_id = $2 AND code_hash = $4 AND used_at IS NULL AND expires_at > $3
      RETURNING ${JOIN_COLUMNS}`,
    [input.tokenHash, input.linkId, input.now, input.codeHash])
  if (r.rows[0] !== undefined) return r.rows[0]
  const row = await findInviteLinkJoin(q, input)
  if (row === null) return { reason: 'unknown' }
  return { reason: row.usedAt !== null ? 'used' : 'expired' }
}

/** A confirmation made through this link's current code, used or not (one through a replaced code: null). */
export async function findInviteLinkJoin (
  q: Queryable, input: { linkId: string, codeHash: string, tokenHash: string }
): Promise<InviteLinkJoinRow | null> {
  const r = await q.query<InviteLinkJoinRow>(
    `SELECT ${JOIN_COLUMNS} FROM invite_link_joins WHERE token_hash = $1 AND link_id = $2 AND code_hash = $3`,
    [input.tokenHash, input.linkId, input.codeHash])
  return r.rows[0] ?? null
}
