import type { Queryable } from './client.js'
import type { AuditEventRow } from './audit-events.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'

// Audit streams (migration 058) and the audit records they deliver, read after a stream's cursor.

export type AuditStreamKind = 'https' | 'splunk' | 'datadog'

export interface AuditStreamRow {
  id: string
  workspaceId: string
  kind: AuditStreamKind
  name: string
  url: string
  credentialEnc: string
  status: 'active' | 'paused'
  pausedReason: 'admin' | 'failing' | null
  /** The chain place (audit_events.chain_seq) of the last record acknowledged; 0: none yet. */
  cursorSeq: number
  failures: number
  failingSince: Date | null
  nextAttemptAt: Date | null
  lastDeliveryAt: Date | null
  lastDeliveredRecordAt: Date | null
  lastStatusCode: number | null
  lastError: string | null
  runToken: string | null
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", kind, name, url, credential_enc AS "credentialEnc", status,
  paused_reason AS "pausedReason", cursor_seq::float8 AS "cursorSeq", failures, failing_since AS "failingSince",
  next_attempt_at AS "nextAttemptAt", last_delivery_at AS "lastDeliveryAt",
  last_delivered_record_at AS "lastDeliveredRecordAt", last_status_code AS "lastStatusCode",
  last_error AS "lastError", run_token::text AS "runToken", created_at AS "createdAt", updated_at AS "updatedAt"`

/** A new stream, active, delivering what the workspace records from now on (after its chain's last place). */
export async function insertAuditStream (q: Queryable, s: {
  id: string,
  workspaceId: string,
  kind: AuditStreamKind,
  name: string,
  url: string,
  credentialEnc: string,
  runToken: string,
  createdBy: string | null,
  now: Date
}): Promise<AuditStreamRow> {
  const r = await q.query<AuditStreamRow>(
    `INSERT INTO audit_streams (id, workspace_id, kind, name, url, credential_enc, cursor_seq, run_token, created_by,
                                polled_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6,
             (SELECT coalesce(max(a.chain_seq), 0) FROM audit_events a WHERE a.workspace_id = $2), $7, $8, $9, $9, $9)
     RETURNING ${COLUMNS}`,
    [s.id, s.workspaceId, s.kind, s.name, s.url, s.credentialEnc, s.runToken, s.createdBy, s.now])
  return r.rows[0] as AuditStreamRow
}

export async function findAuditStream (q: Queryable, workspaceId: string, id: string): Promise<AuditStreamRow | null> {
  const r = await q.query<AuditStreamRow>(
    `SELECT ${COLUMNS} FROM audit_streams WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
  return r.rows[0] ?? null
}

/** The stream by id alone (the delivery job's view), locked when `forUpdate`. */
export async function findAuditStreamById (
  q: Queryable, id: string, opts: { forUpdate?: boolean } = {}
): Promise<AuditStreamRow | null> {
  const r = await q.query<AuditStreamRow>(
    `SELECT ${COLUMNS} FROM audit_streams WHERE id = $1${opts.forUpdate === true ? ' FOR UPDATE' : ''}`, [id])
  return r.rows[0] ?? null
}

export async function listAuditStreams (q: Queryable, workspaceId: string): Promise<AuditStreamRow[]> {
  const r = await q.query<AuditStreamRow>(
    `SELECT ${COLUMNS} FROM audit_streams WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, [workspaceId])
  return r.rows
}

/** Changes what is given (a new credential: sealed by the caller). */
export async function updateAuditStream (q: Queryable, workspaceId: string, id: string, change: {
  name?: string | undefined, url?: string | undefined, credentialEnc?: string | undefined, now: Date
}): Promise<AuditStreamRow | null> {
  const r = await q.query<AuditStreamRow>(
    `UPDATE audit_streams SET name = coalesce($3, name), url = coalesce($4, url),
            credential_enc = coalesce($5, credential_enc), updated_at = $6
      WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [workspaceId, id, change.name ?? null, change.url ?? null, change.credentialEnc ?? null, change.now])
  return r.rows[0] ?? null
}

export async function deleteAuditStream (q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const r = await q.query('DELETE FROM audit_streams WHERE workspace_id = $1 AND id = $2', [workspaceId, id])
  return r.rowCount === 1
}

/**
 * Pauses (`pausedReason` set) or resumes (null) a stream. Resuming starts a new delivery chain
 * (`runToken`) and clears the failure streak; the cursor stays where it is. False when the stream
 * was already in that state (nothing changed).
 */
export async function setAuditStreamPaused (q: Queryable, id: string, change: {
  pausedReason: 'admin' | 'failing' | null, runToken: string | null, now: Date
}): Promise<boolean> {
  const r = await q.query(
    `UPDATE audit_streams
        SET status = CASE WHEN $2::text IS NULL THEN 'active' ELSE 'paused' END, paused_reason = $2,
            run_token = coalesce($3::uuid, run_token), failures = CASE WHEN $2::text IS NULL THEN 0 ELSE failures END,
            failing_since = CASE WHEN $2::text IS NULL THEN NULL ELSE failing_since END,
            next_attempt_at = NULL, polled_at = $4, updated_at = $4
      WHERE id = $1 AND status = CASE WHEN $2::text IS NULL THEN 'paused' ELSE 'active' END`,
    [id, change.pausedReason, change.runToken, change.now])
  return r.rowCount === 1
}

// Each step of a delivery chain writes its outcome only if the stream still holds the step's
// token, and hands the next step a new one (\`nextToken\`): a second job of the same step (a job
// retried after its worker vanished, while the worker's own outcome landed) finds its token gone,
// writes nothing and queues nothing, so one chain stays one. False: the token was gone.

/** The token a step was given, and the one it hands the next step. */
interface StepToken { runToken: string, nextToken: string }

/** A batch acknowledged: the cursor moves to its last record; the failure streak ends. */
export async function recordStreamDelivered (q: Queryable, id: string, token: StepToken, d: {
  cursorSeq: number, recordAt: Date, statusCode: number, now: Date
}): Promise<boolean> {
  const r = await q.query(
    `UPDATE audit_streams SET cursor_seq = $4, last_delivered_record_at = $5, last_status_code = $6, last_error = NULL,
            failures = 0, failing_since = NULL, next_attempt_at = NULL, last_delivery_at = $7, polled_at = $7,
            run_token = $3
      WHERE id = $1 AND run_token = $2 AND status = 'active'`,
    [id, token.runToken, token.nextToken, d.cursorSeq, d.recordAt, d.statusCode, d.now])
  return r.rowCount === 1
}

/** A failed attempt: the streak grows (since its first failure) and the next attempt is due at `nextAttemptAt`. */
export async function recordStreamFailure (q: Queryable, id: string, token: StepToken, f: {
  statusCode: number | null, error: string | null, nextAttemptAt: Date, now: Date
}): Promise<boolean> {
  const r = await q.query(
    `UPDATE audit_streams SET failures = failures + 1, failing_since = coalesce(failing_since, $7),
            last_status_code = $4, last_error = $5, next_attempt_at = $6, polled_at = $7, run_token = $3
      WHERE id = $1 AND run_token = $2 AND status = 'active'`,
    [id, token.runToken, token.nextToken, f.statusCode, f.error, f.nextAttemptAt, f.now])
  return r.rowCount === 1
}

/** The chain looked and found nothing to send. */
export async function recordStreamPolled (
  q: Queryable, id: string, token: StepToken, now: Date
): Promise<boolean> {
  const r = await q.query(
    'UPDATE audit_streams SET polled_at = $4, run_token = $3 WHERE id = $1 AND run_token = $2 AND status = \'active\'',
    [id, token.runToken, token.nextToken, now])
  return r.rowCount === 1
}

/**
 * Active streams whose delivery chain has not been heard of since `staleBefore` (its jobs' retries
 * spent, a database down for hours): each gets a new chain (`runToken`); returns their ids.
 */
export async function restartStaleStreams (q: Queryable, staleBefore: Date, now: Date): Promise<Array<{
  id: string, runToken: string
}>> {
  const r = await q.query<{ id: string, runToken: string }>(
    `UPDATE audit_streams SET run_token = gen_random_uuid(), polled_at = $2
      WHERE status = 'active' AND polled_at < $1 AND coalesce(next_attempt_at, polled_at) < $1
      RETURNING id, run_token::text AS "runToken"`,
    [staleBefore, now])
  return r.rows
}

/** An audit record with its workspace and chain place, as a stream delivers it. */
export interface StreamRecordRow extends AuditEventRow { workspaceId: string, chainSeq: number }

/** Up to `limit` of a workspace's audit records after chain place `afterSeq`, in chain order. */
export async function listRecordsAfter (
  q: Queryable, workspaceId: string, afterSeq: number, limit: number
): Promise<StreamRecordRow[]> {
  const r = await q.query<StreamRecordRow>(
    `SELECT a.id::text AS id, a.workspace_id AS "workspaceId", a.action, a.actor_type AS "actorType",
            a.actor_id AS "actorId", a.actor_label AS "actorLabel", a.source, a.target_type AS "targetType",
            a.target_id AS "targetId", a.payload, a.created_at AS "createdAt", a.chain_seq::float8 AS "chainSeq",
            a.chain_seq::float8 AS sequence, a.previous_hash AS "previousHash", a.hash
       FROM audit_events a
      WHERE a.workspace_id = $1 AND a.chain_seq > $2
      ORDER BY a.chain_seq LIMIT $3`,
    [workspaceId, afterSeq, limit])
  return r.rows
}

/** Records a stream has still to deliver (its lag), counted up to `cap`. */
export async function countRecordsAfter (
  q: Queryable, workspaceId: string, afterSeq: number, cap: number
): Promise<number> {
  const r = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM audit_events a
      WHERE a.workspace_id = $1 AND a.chain_seq > $2 LIMIT $3) AS pending`,
    [workspaceId, afterSeq, cap])
  return r.rows[0]?.n ?? 0
}

export type SealedStreamCredentials = SealedRow<string, 'credentialEnc'>

/** A page of the streams' sealed credentials after `afterId`, by id (npm run secrets:reencrypt). */
export async function listSealedStreamCredentials (
  q: Queryable, afterId: string | null, limit: number
): Promise<SealedStreamCredentials[]> {
  const r = await q.query<{ id: string, credentialEnc: string }>(
    `SELECT id, credential_enc AS "credentialEnc" FROM audit_streams
      WHERE $1::uuid IS NULL OR id > $1::uuid ORDER BY id LIMIT $2`, [afterId, limit])
  return r.rows.map(row => ({ id: row.id, values: { credentialEnc: row.credentialEnc } }))
}

export async function resealStreamCredential (q: Queryable, id: string, from: string, to: string): Promise<boolean> {
  return await replaceSealed(q, { table: 'audit_streams', key: 'id', id: [id] }, 'credential_enc', from, to)
}
