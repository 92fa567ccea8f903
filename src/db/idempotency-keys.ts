import type { Queryable } from './client.js'

// Idempotency-Key records: one row per (workspace, operation, key). A row without status_code is
// a request still running; with one, the stored answer to replay. Failed (5xx) runs delete their
// row, so a retry with the same key runs again.

export interface IdempotencyRow {
  requestHash: string
  statusCode: number | null
  response: unknown
  createdAt: Date
}

const COLUMNS = 'request_hash AS "requestHash", status_code AS "statusCode", response, created_at AS "createdAt"'

/**
 * Claim a key. Returns null when this call inserted the row (the caller runs the request), or
 * the row another request holds. One statement, so two concurrent claims cannot both win.
 */
export async function claimIdempotencyKey (q: Queryable, k: { workspaceId: string, operation: string, key: string, requestHash: string, now: Date }): Promise<IdempotencyRow | null> {
  const ins = await q.query(
    `INSERT INTO idempotency_keys (workspace_id, operation, key, request_hash, created_at)
     VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, operation, key) DO NOTHING`,
    [k.workspaceId, k.operation, k.key, k.requestHash, k.now])
  if (ins.rowCount === 1) return null
  const r = await q.query<IdempotencyRow>(
    `SELECT ${COLUMNS} FROM idempotency_keys WHERE workspace_id = $1 AND operation = $2 AND key = $3`,
    [k.workspaceId, k.operation, k.key])
  // Deleted between the two statements (the holder failed): claim it again.
  return r.rows[0] ?? await claimIdempotencyKey(q, k)
}

/**
 * Take over a claim left running for longer than `staleBefore` (its process died mid-request).
 * Returns true when this call now holds the key.
 */
export async function takeOverStaleIdempotencyKey (q: Queryable, k: { workspaceId: string, operation: string, key: string, requestHash: string, staleBefore: Date, now: Date }): Promise<boolean> {
  const r = await q.query(
    `UPDATE idempotency_keys SET created_at = $5
      WHERE workspace_id = $1 AND operation = $2 AND key = $3 AND request_hash = $4
        AND status_code IS NULL AND created_at < $6`,
    [k.workspaceId, k.operation, k.key, k.requestHash, k.now, k.staleBefore])
  return r.rowCount === 1
}

/** Store the final answer of a claimed key. */
export async function completeIdempotencyKey (q: Queryable, k: { workspaceId: string, operation: string, key: string }, statusCode: number, response: unknown): Promise<void> {
  await q.query(
    `UPDATE idempotency_keys SET status_code = $4, response = $5
      WHERE workspace_id = $1 AND operation = $2 AND key = $3 AND status_code IS NULL`,
    [k.workspaceId, k.operation, k.key, statusCode, JSON.stringify(response)])
}

/** Give up a claim without an answer (the request failed with a 5xx): a retry runs again. */
export async function releaseIdempotencyKey (q: Queryable, k: { workspaceId: string, operation: string, key: string }): Promise<void> {
  await q.query(
    'DELETE FROM idempotency_keys WHERE workspace_id = $1 AND operation = $2 AND key = $3 AND status_code IS NULL',
    [k.workspaceId, k.operation, k.key])
}

/** Forget this key if it was first used before `before` (past the retention period). */
export async function forgetExpiredIdempotencyKey (q: Queryable, k: { workspaceId: string, operation: string, key: string }, before: Date): Promise<void> {
  await q.query(
    'DELETE FROM idempotency_keys WHERE workspace_id = $1 AND operation = $2 AND key = $3 AND created_at < $4',
    [k.workspaceId, k.operation, k.key, before])
}

/** Housekeeping: up to `limit` records created before `before` (past the replay window). */
export async function deleteIdempotencyKeysBefore (q: Queryable, before: Date, limit: number): Promise<number> {
  const r = await q.query(
    `DELETE FROM idempotency_keys WHERE (workspace_id, operation, key) IN (
       SELECT workspace_id, operation, key FROM idempotency_keys WHERE created_at < $1 LIMIT $2)`, [before, limit])
  return r.rowCount
}
