import type { Queryable } from './client.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'
import { deleteBatch } from './batch-delete.js'

// Idempotency-Key records: one row per (workspace, principal, operation, key): a key is the
// sender's own (a person or an API key), another principal's same key is another row. A row without status_code is
// a claim — a lease held by `owner` until `locked_until`, renewed while its request works; with
// one, the stored (encrypted) answer to replay. Failed (5xx) runs delete their row, so a retry
// with the same key runs again — unless the run recorded a checkpoint (sealed, see
// src/idempotency) before an irreversible step: then the row stays, its lease ended, and the
// retry that claims it is handed the checkpoint.

export interface IdempotencyKeyId {
  workspaceId: string
  /** Who sent the key: `user:<id>` or `key:<id>` (src/idempotency). */
  principal: string
  operation: string
  key: string
}

export interface IdempotencyRow {
  requestHash: string
  statusCode: number | null
  /** The sealed answer (see src/idempotency), null while the claim runs. */
  response: string | null
  lockedUntil: Date | null
  createdAt: Date
}

/** One key's row: its primary key, parameters $1–$4 (keyParams). */
const THIS_KEY = 'workspace_id = $1 AND operation = $2 AND key = $3 AND principal = $4'
const keyParams = (id: IdempotencyKeyId): string[] => [id.workspaceId, id.operation, id.key, id.principal]

const COLUMNS = 'request_hash AS "requestHash", status_code AS "statusCode", response, ' +
  'locked_until AS "lockedUntil", created_at AS "createdAt"'

/** This call holds the key; `checkpoint` is what an earlier holder recorded and never completed. */
export interface IdempotencyClaim { claimed: true, checkpoint: string | null }

/**
 * Claim a key for `owner` until `lockedUntil`. Returns a claim when this call now holds it — it
 * inserted the row, or took over a claim whose lease ran out (its process died, or it failed
 * after a checkpoint) — or the row as another request holds or answered it. Each step is one
 * statement, so two concurrent claims cannot both win.
 */
export async function claimIdempotencyKey (
  q: Queryable, claim: IdempotencyKeyId & { requestHash: string, owner: string, lockedUntil: Date, now: Date }
): Promise<IdempotencyRow | IdempotencyClaim> {
  const ins = await q.query(
    `INSERT INTO idempotency_keys
       (workspace_id, operation, key, request_hash, owner, locked_until, created_at, principal)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (workspace_id, principal, operation, key) DO NOTHING`,
    [claim.workspaceId, claim.operation, claim.key, claim.requestHash, claim.owner, claim.lockedUntil, claim.now,
      claim.principal])
  if (ins.rowCount === 1) return { claimed: true, checkpoint: null }
  const took = await q.query<{ checkpoint: string | null }>(
    `UPDATE idempotency_keys SET owner = $5, locked_until = $6
      WHERE workspace_id = $1 AND operation = $2 AND key = $3 AND principal = $8 AND request_hash = $4
        -- <=: a lease that ends now (a run released after its checkpoint) is over at once.
        AND status_code IS NULL AND locked_until <= $7
      RETURNING checkpoint`,
    [claim.workspaceId, claim.operation, claim.key, claim.requestHash, claim.owner, claim.lockedUntil, claim.now,
      claim.principal])
  const taken = took.rows[0]
  if (taken !== undefined) return { claimed: true, checkpoint: taken.checkpoint }
  const r = await q.query<IdempotencyRow>(
    `SELECT ${COLUMNS} FROM idempotency_keys WHERE ${THIS_KEY}`, keyParams(claim))
  // Deleted between the statements (the holder failed): claim it again.
  return r.rows[0] ?? await claimIdempotencyKey(q, claim)
}

/** Sets one column of the owner's open claim; false when the claim is no longer this owner's. */
async function updateOwnClaim (
  q: Queryable, id: IdempotencyKeyId, owner: string, column: 'locked_until' | 'checkpoint', value: Date | string
): Promise<boolean> {
  const r = await q.query(
    `UPDATE idempotency_keys SET ${column} = $6
      WHERE ${THIS_KEY} AND owner = $5 AND status_code IS NULL`,
    [...keyParams(id), owner, value])
  return r.rowCount === 1
}

/** Extend the owner's lease; false when the claim is no longer this owner's. */
export async function renewIdempotencyKey (
  q: Queryable, id: IdempotencyKeyId, owner: string, lockedUntil: Date
): Promise<boolean> {
  return await updateOwnClaim(q, id, owner, 'locked_until', lockedUntil)
}

/** Record the owner's (sealed) checkpoint; false when the claim is no longer this owner's. */
export async function checkpointIdempotencyKey (
  q: Queryable, id: IdempotencyKeyId, owner: string, sealed: string
): Promise<boolean> {
  return await updateOwnClaim(q, id, owner, 'checkpoint', sealed)
}

/** Store the final (sealed) answer of the owner's claim; a checkpoint has served its purpose. */
export async function completeIdempotencyKey (
  q: Queryable, id: IdempotencyKeyId, owner: string, statusCode: number, sealed: string
): Promise<void> {
  await q.query(
    `UPDATE idempotency_keys SET status_code = $6, response = $7, locked_until = NULL, checkpoint = NULL
      WHERE ${THIS_KEY} AND owner = $5 AND status_code IS NULL`,
    [...keyParams(id), owner, statusCode, sealed])
}

/**
 * Give up the owner's claim without an answer (the request failed with a 5xx): a retry runs
 * again. A claim with a checkpoint is kept with its lease ended, so the retry takes it over at
 * once and is handed the checkpoint.
 */
export async function releaseIdempotencyKey (
  q: Queryable, id: IdempotencyKeyId, owner: string, now: Date
): Promise<void> {
  const r = await q.query(
    `DELETE FROM idempotency_keys
      WHERE ${THIS_KEY} AND owner = $5 AND status_code IS NULL AND checkpoint IS NULL`,
    [...keyParams(id), owner])
  if (r.rowCount === 1) return
  await q.query(
    `UPDATE idempotency_keys SET locked_until = $6
      WHERE ${THIS_KEY} AND owner = $5 AND status_code IS NULL`,
    [...keyParams(id), owner, now])
}

/** Forget this key if it was first used before `before` (past the retention period). */
export async function forgetExpiredIdempotencyKey (q: Queryable, id: IdempotencyKeyId, before: Date): Promise<void> {
  await q.query(`DELETE FROM idempotency_keys WHERE ${THIS_KEY} AND created_at < $5`, [...keyParams(id), before])
}

/** Housekeeping: up to `limit` records created before `before` (past the replay window). */
export async function deleteIdempotencyKeysBefore (q: Queryable, before: Date, limit: number): Promise<number> {
  const key = 'workspace_id, principal, operation, key'
  return await deleteBatch(q, { table: 'idempotency_keys', key, where: 'created_at < $1' }, before, limit)
}

/** A row's sealed values, for re-encryption (src/lib/reseal.ts). */
export type SealedIdempotencyKey = SealedRow<IdempotencyKeyId, 'response' | 'checkpoint'>

/** Rows holding a sealed answer or checkpoint, in key order after `after` (a page of `limit`). */
export async function listSealedIdempotencyKeys (
  q: Queryable, after: IdempotencyKeyId | null, limit: number
): Promise<SealedIdempotencyKey[]> {
  const a = after ?? { workspaceId: '00000000-0000-0000-0000-000000000000', principal: '', operation: '', key: '' }
  const r = await q.query<IdempotencyKeyId & SealedIdempotencyKey['values']>(
    `SELECT workspace_id AS "workspaceId", principal, operation, key, response, checkpoint FROM idempotency_keys
      WHERE (response IS NOT NULL OR checkpoint IS NOT NULL)
        AND (workspace_id, principal, operation, key) > ($1, $2, $3, $4)
      ORDER BY workspace_id, principal, operation, key LIMIT $5`,
    [a.workspaceId, a.principal, a.operation, a.key, limit])
  return r.rows.map(({ response, checkpoint, ...id }) => ({ id, values: { response, checkpoint } }))
}

/** Replaces one sealed value if the row still holds `from`; false otherwise. */
export async function resealIdempotencyKey (
  q: Queryable, id: IdempotencyKeyId, column: 'response' | 'checkpoint', from: string, to: string
): Promise<boolean> {
  const key = 'workspace_id, operation, key, principal' // as keyParams
  return await replaceSealed(q, { table: 'idempotency_keys', key, id: keyParams(id) }, column, from, to)
}
