import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'
import type { Role } from './users.js'
import { INVITATION_COLUMNS, type InvitationRow, type SendLease } from './invitations.js'

// Batches of invitations (migration 027): the batch, its rows and their results, and the
// statements the batch's delivery jobs use on the invitations themselves.

export type BatchResult = 'invited' | 'resent' | 'already_member' | 'invalid' | 'duplicate' | 'over_budget'
export type BatchDelivery = 'queued' | 'sent' | 'failed' | 'cancelled'

/** Who made a batch: what its delivery jobs need to name the inviter (e-mail, audit trail). */
export interface BatchActor {
  kind: 'session' | 'apiKey' | 'chat'
  userId: string
  email: string
  name: string | null
  apiKeyId: string | null
  requestId: string | null
}

export interface BatchRow {
  workspaceId: string
  id: string
  actor: BatchActor
  status: 'processing' | 'completed'
  total: number
  createdAt: Date
  completedAt: Date | null
}

export interface BatchItem {
  position: number
  email: string
  role: Role
  result: BatchResult
  invitationId: string | null
  delivery: BatchDelivery | null
  attempts: number
  retryAfterSeconds: number | null
  /** For a duplicate row: the position of the first row of the same address (migration 043). */
  duplicateOf: number | null
  message: string | null
}

const BATCH_COLUMNS = `id, workspace_id AS "workspaceId", actor, status, total, created_at AS "createdAt",
  completed_at AS "completedAt"`
const ITEM_COLUMNS = `position, email, role, result, invitation_id AS "invitationId", delivery, attempts,
  retry_after_seconds AS "retryAfterSeconds", duplicate_of AS "duplicateOf", message`

export async function insertBatch (
  q: Queryable, b: { workspaceId: string, actor: BatchActor, total: number, now: Date }
): Promise<BatchRow> {
  const r = await q.query<BatchRow>(
    `INSERT INTO invitation_batches (workspace_id, actor, status, total, created_at)
     VALUES ($1, $2, 'processing', $3, $4) RETURNING ${BATCH_COLUMNS}`,
    [b.workspaceId, JSON.stringify(b.actor), b.total, b.now])
  return r.rows[0] as BatchRow
}

/** All rows of a batch in one statement (arrays unnested: one round trip for 1,000 rows). */
export async function insertBatchItems (q: Queryable, batchId: string, items: BatchItem[]): Promise<void> {
  if (items.length === 0) return
  await q.query(
    `INSERT INTO invitation_batch_rows (batch_id, position, email, role, result, invitation_id, delivery,
                                        retry_after_seconds, duplicate_of, message)
     SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::uuid[], $7::text[], $8::int[],
                              $9::int[], $10::text[])`,
    [
      batchId, items.map(i => i.position), items.map(i => i.email), items.map(i => i.role),
      items.map(i => i.result), items.map(i => i.invitationId), items.map(i => i.delivery),
      items.map(i => i.retryAfterSeconds), items.map(i => i.duplicateOf), items.map(i => i.message)
    ])
}

export async function findBatch (q: Queryable, workspaceId: string, id: string): Promise<BatchRow | null> {
  const r = await q.query<BatchRow>(
    `SELECT ${BATCH_COLUMNS} FROM invitation_batches WHERE id = $1 AND workspace_id = $2`, [id, workspaceId])
  return r.rows[0] ?? null
}

/** A batch by id alone (its delivery jobs). */
export async function findBatchById (q: Queryable, id: string): Promise<BatchRow | null> {
  const r = await q.query<BatchRow>(`SELECT ${BATCH_COLUMNS} FROM invitation_batches WHERE id = $1`, [id])
  return r.rows[0] ?? null
}

/** Rows of a batch in request order, from `after` (exclusive; -1: the first). */
export async function listBatchItems (
  q: Queryable, batchId: string, after: number, limit: number
): Promise<BatchItem[]> {
  const r = await q.query<BatchItem>(
    `SELECT ${ITEM_COLUMNS} FROM invitation_batch_rows WHERE batch_id = $1 AND position > $2
      ORDER BY position LIMIT $3`, [batchId, after, limit])
  return r.rows
}

/** How many rows of a batch have each result and each delivery state. */
export async function countBatchItems (
  q: Queryable, batchId: string
): Promise<Array<{ result: BatchResult, delivery: BatchDelivery | null, n: number }>> {
  const r = await q.query<{ result: BatchResult, delivery: BatchDelivery | null, n: number }>(
    `SELECT result, delivery, count(*)::int AS n FROM invitation_batch_rows WHERE batch_id = $1
      GROUP BY result, delivery`, [batchId])
  return r.rows
}

/** The rows of positions [from, to] whose e-mail is still to send. */
export async function queuedBatchItems (
  q: Queryable, batchId: string, from: number, to: number
): Promise<BatchItem[]> {
  const r = await q.query<BatchItem>(
    `SELECT ${ITEM_COLUMNS} FROM invitation_batch_rows
      WHERE batch_id = $1 AND position BETWEEN $2 AND $3 AND delivery = 'queued' ORDER BY position`,
    [batchId, from, to])
  return r.rows
}

/** A queued row's e-mail is settled (sent, failed for good, cancelled); false when it was not queued. */
export async function settleBatchItem (
  q: Queryable, batchId: string, position: number, delivery: Exclude<BatchDelivery, 'queued'>, message: string | null
): Promise<boolean> {
  const r = await q.query(
    `UPDATE invitation_batch_rows SET delivery = $3, message = $4, attempts = attempts + 1
      WHERE batch_id = $1 AND position = $2 AND delivery = 'queued'`, [batchId, position, delivery, message])
  return r.rowCount === 1
}

/**
 * The rows of positions from–to still queued, failed for good in one statement (their last
 * attempt's error kept, else `message`); answers how many.
 */
export async function failQueuedBatchItems (
  q: Queryable, b: { batchId: string, from: number, to: number, message: string }
): Promise<number> {
  const r = await q.query(
    `UPDATE invitation_batch_rows SET delivery = 'failed', message = COALESCE(message, $4)
      WHERE batch_id = $1 AND position BETWEEN $2 AND $3 AND delivery = 'queued'`,
    [b.batchId, b.from, b.to, b.message])
  return r.rowCount ?? 0
}

/** A failed attempt of a queued row; answers the attempts so far. */
export async function countBatchAttempt (
  q: Queryable, batchId: string, position: number, message: string
): Promise<number> {
  const r = await q.query<{ attempts: number }>(
    `UPDATE invitation_batch_rows SET attempts = attempts + 1, message = $3
      WHERE batch_id = $1 AND position = $2 AND delivery = 'queued' RETURNING attempts`, [batchId, position, message])
  return r.rows[0]?.attempts ?? 0
}

/**
 * Deletes up to `limit` batches completed before `before`, their rows with them (ON DELETE
 * CASCADE: up to 1,000 each); answers how many batches. A batch still processing is never deleted.
 */
export async function deleteCompletedBatchesBefore (q: Queryable, before: Date, limit: number): Promise<number> {
  const where = "status = 'completed' AND completed_at < $1"
  return await deleteBatch(q, { table: 'invitation_batches', key: 'id', where }, before, limit)
}

/** Marks the batch completed once no row is queued; true when this call did. */
export async function completeBatchIfDone (q: Queryable, batchId: string, now: Date): Promise<boolean> {
  const r = await q.query(
    `UPDATE invitation_batches SET status = 'completed', completed_at = $2
      WHERE id = $1 AND status = 'processing'
        AND NOT EXISTS (SELECT 1 FROM invitation_batch_rows WHERE batch_id = $1 AND delivery = 'queued')`,
    [batchId, now])
  return r.rowCount === 1
}

/** The addresses of `emails` that are members of the workspace now. */
export async function memberEmailsAmong (q: Queryable, workspaceId: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set()
  const r = await q.query<{ email: string }>(
    'SELECT email FROM users WHERE workspace_id = $1 AND email = ANY($2::text[]) AND status <> \'removed\'',
    [workspaceId, emails])
  return new Set(r.rows.map(row => row.email))
}

/**
 * A pending invitation for each address of a batch, in one statement: a new one (no token yet:
 * its delivery gives it one), or the pending one refreshed for a re-send (role, inviter, expiry;
 * its delivery state back to pending; its token, and so the link the invitee holds, unchanged
 * until the new e-mail goes out). `created` tells which, per address.
 */
export async function upsertBatchInvitations (
  q: Queryable,
  b: {
    workspaceId: string
    rows: Array<{ email: string, role: Role, locale: string | null }>
    expiresAt: Date
    invitedBy: string | null
    invitedByApiKey: string | null
    now: Date
  }
): Promise<Array<{ id: string, email: string, created: boolean }>> {
  const r = await q.query<{ id: string, email: string, created: boolean }>(
    `INSERT INTO invitations (workspace_id, email, role, token_hash, expires_at, invited_by, invited_by_api_key,
                              created_at, updated_at, locale)
     SELECT $1, e, r, NULL, $4, $5, $6, $7, $7, l FROM unnest($2::text[], $3::text[], $8::text[]) AS t(e, r, l)
     ON CONFLICT (workspace_id, email) WHERE status = 'pending'
     DO UPDATE SET role = EXCLUDED.role, locale = COALESCE(EXCLUDED.locale, invitations.locale),
                   expires_at = EXCLUDED.expires_at, invited_by = EXCLUDED.invited_by,
                   invited_by_api_key = EXCLUDED.invited_by_api_key, delivery_status = 'pending',
                   delivery_error = NULL, updated_at = EXCLUDED.updated_at
     RETURNING id, email, (xmax = 0) AS created`,
    [
      b.workspaceId, b.rows.map(x => x.email), b.rows.map(x => x.role), b.expiresAt, b.invitedBy,
      b.invitedByApiKey, b.now, b.rows.map(x => x.locale)
    ])
  return r.rows
}

/**
 * Gives a batch's pending invitation the token its e-mail will carry, and takes its send lease,
 * if its e-mail is still owed (delivery pending or failed) and no other send holds the lease.
 * Answers the row, or why not: 'busy' (another send holds the lease), 'delivered' (another
 * request sent it since), 'gone' (accepted, revoked, expired, removed).
 */
export async function claimBatchInvitation (
  q: Queryable,
  c: { id: string, tokenHash: string, expiresAt: Date, lease: SendLease, now: Date }
): Promise<InvitationRow | 'busy' | 'delivered' | 'gone'> {
  const r = await q.query<InvitationRow>(
    `UPDATE invitations SET token_hash = $2, expires_at = $3, send_owner = $4, send_until = $5, updated_at = $6
      WHERE id = $1 AND status = 'pending' AND expires_at > $6 AND delivery_status IN ('pending', 'failed')
        AND (send_until IS NULL OR send_until <= $6)
      RETURNING ${INVITATION_COLUMNS}`, [c.id, c.tokenHash, c.expiresAt, c.lease.owner, c.lease.until, c.now])
  if (r.rows[0] !== undefined) return r.rows[0]
  const why = await q.query<{ status: string, expiresAt: Date, deliveryStatus: string, busy: boolean }>(
    `SELECT status, expires_at AS "expiresAt", delivery_status AS "deliveryStatus",
            (send_until IS NOT NULL AND send_until > $2) AS busy
       FROM invitations WHERE id = $1`, [c.id, c.now])
  const row = why.rows[0]
  if (row === undefined || row.status !== 'pending' || new Date(row.expiresAt) <= c.now) return 'gone'
  // Still owed (pending, failed): another send holds the lease, or it was just released — try again.
  if (row.busy || row.deliveryStatus === 'pending' || row.deliveryStatus === 'failed') return 'busy'
  return 'delivered' // sent, by the identity provider, or since viewed or bounced: it left once
}

/**
 * `claimBatchInvitation` for a chunk's invitations in one statement, each with its own token:
 * answers the rows claimed (their leases taken under `lease`). An invitation not answered was
 * not claimed (busy, delivered or gone); the caller asks `claimBatchInvitation` why, one by one.
 */
export async function claimBatchInvitations (
  q: Queryable,
  c: { claims: Array<{ id: string, tokenHash: string }>, expiresAt: Date, lease: SendLease, now: Date }
): Promise<InvitationRow[]> {
  if (c.claims.length === 0) return []
  const r = await q.query<InvitationRow>(
    `UPDATE invitations
        SET token_hash = c.claim_hash, expires_at = $3, send_owner = $4, send_until = $5, updated_at = $6
       FROM unnest($1::uuid[], $2::text[]) AS c(claim_id, claim_hash)
      WHERE id = c.claim_id AND status = 'pending' AND expires_at > $6 AND delivery_status IN ('pending', 'failed')
        AND (send_until IS NULL OR send_until <= $6)
      RETURNING ${INVITATION_COLUMNS}`,
    [c.claims.map(x => x.id), c.claims.map(x => x.tokenHash), c.expiresAt, c.lease.owner, c.lease.until, c.now])
  return r.rows
}

/** What one e-mail of a batch that left us records (recordDelivery's sent states). */
export interface BatchSend {
  invitationId: string
  position: number
  status: 'sent' | 'identity_provider'
  idpInvitationId: string | null
  linkSealed: string | null
  now: Date
}

/**
 * Records e-mails of a batch that left us, in one statement: each invitation's delivery (as
 * recordDelivery writes it) with its send lease given back when `owner` holds it, and each
 * queued row of the batch settled as sent. One statement, so both or neither.
 */
export async function recordBatchSends (
  q: Queryable, batchId: string, owner: string, sends: BatchSend[]
): Promise<void> {
  if (sends.length === 0) return
  await q.query(
    `WITH sent AS (
       SELECT * FROM unnest($3::uuid[], $4::int[], $5::text[], $6::text[], $7::text[], $8::timestamptz[])
         AS s(invitation_id, row_position, status, idp_id, sealed, at)
     ), delivered AS (
       UPDATE invitations i
          SET delivery_status = s.status, delivery_error = NULL,
              idp_invitation_id = COALESCE(s.idp_id, i.idp_invitation_id),
              delivery_attempts = i.delivery_attempts + 1, last_sent_at = s.at,
              link_sealed = COALESCE(s.sealed, i.link_sealed), updated_at = s.at,
              send_owner = CASE WHEN i.send_owner = $2 THEN NULL ELSE i.send_owner END,
              send_until = CASE WHEN i.send_owner = $2 THEN NULL ELSE i.send_until END
         FROM sent s WHERE i.id = s.invitation_id
       RETURNING i.id
     )
     UPDATE invitation_batch_rows r SET delivery = 'sent', message = NULL, attempts = r.attempts + 1
       FROM sent s WHERE r.batch_id = $1 AND r.position = s.row_position AND r.delivery = 'queued'`,
    [
      batchId, owner, sends.map(x => x.invitationId), sends.map(x => x.position), sends.map(x => x.status),
      sends.map(x => x.idpInvitationId), sends.map(x => x.linkSealed), sends.map(x => x.now.toISOString())
    ])
}

/** Writes the lazy expiry of the pending invitations past their expiry among `emails` (before re-inviting them). */
export async function expireStaleAmong (
  q: Queryable, workspaceId: string, emails: string[], now: Date
): Promise<Array<{ id: string, workspaceId: string, email: string, role: Role }>> {
  if (emails.length === 0) return []
  const r = await q.query<{ id: string, workspaceId: string, email: string, role: Role }>(
    `UPDATE invitations SET status = 'expired', updated_at = $3
      WHERE workspace_id = $1 AND email = ANY($2::text[]) AND status = 'pending' AND expires_at <= $3
      RETURNING id, workspace_id AS "workspaceId", email, role`, [workspaceId, emails, now])
  return r.rows
}
