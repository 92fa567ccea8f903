import type { Queryable } from './client.js'
import type { Role } from './users.js'
import { statusPageQuery } from './status-page.js'

// Invite requests (a member asks for someone to be invited; an admin decides). Deciding is one
// guarded UPDATE, so of two concurrent decisions exactly one gets the row back.

export type InviteRequestStatus = 'pending' | 'approved' | 'denied' | 'expired'

export interface ChatMessageRef { channel: string, ts: string }

export interface InviteRequestRow {
  id: string
  workspaceId: string
  email: string
  role: Role
  status: InviteRequestStatus
  requestedBy: string | null
  decidedBy: string | null
  decidedAt: Date | null
  reason: string | null
  chatMessages: ChatMessageRef[]
  expiresAt: Date
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", email, role, status, requested_by AS "requestedBy",
  decided_by AS "decidedBy", decided_at AS "decidedAt", reason, chat_messages AS "chatMessages",
  expires_at AS "expiresAt", created_at AS "createdAt", updated_at AS "updatedAt"`

/** The status as read now: a pending request past its expiry is expired. */
export function effectiveRequestStatus (row: InviteRequestRow, now: Date): InviteRequestStatus {
  return row.status === 'pending' && new Date(row.expiresAt) <= now ? 'expired' : row.status
}

/**
 * A new pending request, or the pending one this e-mail already has in the workspace (created:
 * false). A pending row past its expiry is marked expired first, so it does not block a new one.
 */
export async function insertInviteRequest (
  q: Queryable,
  input: { workspaceId: string, email: string, role: Role, requestedBy: string | null, expiresAt: Date, now: Date }
): Promise<{ row: InviteRequestRow, created: boolean }> {
  await q.query(
    `UPDATE invite_requests SET status = 'expired', updated_at = $3
      WHERE workspace_id = $1 AND email = $2 AND status = 'pending' AND expires_at <= $3`,
    [input.workspaceId, input.email, input.now])
  const r = await q.query<InviteRequestRow>(
    `INSERT INTO invite_requests (workspace_id, email, role, requested_by, expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (workspace_id, email) WHERE status = 'pending' DO NOTHING
     RETURNING ${COLUMNS}`,
    [input.workspaceId, input.email, input.role, input.requestedBy, input.expiresAt, input.now])
  if (r.rows[0] !== undefined) return { row: r.rows[0], created: true }
  const existing = await q.query<InviteRequestRow>(
    `SELECT ${COLUMNS} FROM invite_requests WHERE workspace_id = $1 AND email = $2 AND status = 'pending'`,
    [input.workspaceId, input.email])
  return { row: existing.rows[0] as InviteRequestRow, created: false }
}

/** The pending, unexpired request for this e-mail in a workspace, or null. */
export async function findPendingInviteRequest (
  q: Queryable,
  input: { workspaceId: string, email: string, now: Date }
): Promise<InviteRequestRow | null> {
  const r = await q.query<InviteRequestRow>(
    `SELECT ${COLUMNS} FROM invite_requests
      WHERE workspace_id = $1 AND email = $2 AND status = 'pending' AND expires_at > $3`,
    [input.workspaceId, input.email, input.now])
  return r.rows[0] ?? null
}

/**
 * Pending, unexpired requests one member has open in a workspace, counted after a transaction
 * lock on that member: two requests of one member at once are counted one after the other.
 */
export async function lockAndCountOpenRequests (
  q: Queryable,
  input: { workspaceId: string, requestedBy: string, now: Date }
): Promise<number> {
  await q.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`invite-requests:${input.requestedBy}`])
  const r = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM invite_requests
      WHERE workspace_id = $1 AND requested_by = $2 AND status = 'pending' AND expires_at > $3`,
    [input.workspaceId, input.requestedBy, input.now])
  return r.rows[0]?.n ?? 0
}

export async function findInviteRequest (
  q: Queryable,
  workspaceId: string,
  id: string
): Promise<InviteRequestRow | null> {
  const r = await q.query<InviteRequestRow>(
    `SELECT ${COLUMNS} FROM invite_requests WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
  return r.rows[0] ?? null
}

/** Newest first, keyset-paginated on (created_at, id); optionally one requester's only. */
export async function listInviteRequests (
  q: Queryable,
  filter: {
    workspaceId: string,
    status?: InviteRequestStatus | undefined,
    requestedBy?: string | undefined,
    now: Date,
    limit: number,
    before?: { createdAt: Date, id: string } | undefined
  }
): Promise<InviteRequestRow[]> {
  const { text, params } = statusPageQuery({
    columns: COLUMNS,
    from: 'invite_requests',
    scope: 'workspace_id = $1 AND ($2::uuid IS NULL OR requested_by = $2)',
    scopeParams: [filter.workspaceId, filter.requestedBy ?? null]
  }, filter)
  const r = await q.query<InviteRequestRow>(text, params)
  return r.rows
}

/** Decide a request that is still pending; null when it is not (decided, expired, or unknown). */
export async function decideInviteRequest (
  q: Queryable,
  input: {
    workspaceId: string,
    id: string,
    status: 'approved' | 'denied',
    role: Role | null,
    decidedBy: string,
    reason: string | null,
    now: Date
  }
): Promise<InviteRequestRow | null> {
  const r = await q.query<InviteRequestRow>(
    `UPDATE invite_requests
        SET status = $3, role = COALESCE($4, role), decided_by = $5, decided_at = $7, reason = $6, updated_at = $7
      WHERE workspace_id = $1 AND id = $2 AND status = 'pending' AND expires_at > $7
      RETURNING ${COLUMNS}`,
    [input.workspaceId, input.id, input.status, input.role, input.decidedBy, input.reason, input.now])
  return r.rows[0] ?? null
}

/** An approval whose invitation could not be made goes back to pending, so it can be decided again. */
export async function reopenInviteRequest (q: Queryable, id: string, now: Date): Promise<void> {
  await q.query(
    `UPDATE invite_requests SET status = 'pending', decided_by = NULL, decided_at = NULL, updated_at = $2
      WHERE id = $1 AND status = 'approved'`, [id, now])
}

export async function addInviteRequestMessage (q: Queryable, id: string, message: ChatMessageRef): Promise<void> {
  await q.query(
    'UPDATE invite_requests SET chat_messages = chat_messages || $2::jsonb WHERE id = $1',
    [id, JSON.stringify([message])])
}
