import type { Queryable } from './client.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'

export interface WebhookEndpointRow {
  id: string
  workspaceId: string
  url: string
  description: string | null
  eventTypes: string[] | null
  enabled: boolean
  disabledReason: 'gone' | 'failing' | null
  secretEnc: string
  previousSecretEnc: string | null
  previousSecretUntil: Date | null
  failingSince: Date | null
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", url, description, event_types AS "eventTypes", enabled,
  disabled_reason AS "disabledReason", secret_enc AS "secretEnc", previous_secret_enc AS "previousSecretEnc",
  previous_secret_until AS "previousSecretUntil", failing_since AS "failingSince", created_at AS "createdAt",
  updated_at AS "updatedAt"`

export async function insertWebhookEndpoint (q: Queryable, e: {
  id: string,
  workspaceId: string,
  url: string,
  description: string | null,
  eventTypes: string[] | null,
  secretEnc: string,
  createdBy: string,
  now: Date
}): Promise<WebhookEndpointRow> {
  const r = await q.query<WebhookEndpointRow>(
    `INSERT INTO webhook_endpoints (id, workspace_id, url, description, event_types, secret_enc, created_by, created_at,
                                    updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING ${COLUMNS}`,
    [e.id, e.workspaceId, e.url, e.description, e.eventTypes, e.secretEnc, e.createdBy, e.now])
  return r.rows[0] as WebhookEndpointRow
}

export async function findWebhookEndpoint (
  q: Queryable, workspaceId: string, id: string
): Promise<WebhookEndpointRow | null> {
  const r = await q.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
  return r.rows[0] ?? null
}

export async function listWebhookEndpoints (q: Queryable, workspaceId: string): Promise<WebhookEndpointRow[]> {
  const r = await q.query<WebhookEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC`, [workspaceId])
  return r.rows
}

/** Changes what is given; enabling clears the reason and the failure streak. */
export async function updateWebhookEndpoint (q: Queryable, workspaceId: string, id: string, change: {
  url?: string | undefined, eventTypes?: string[] | null | undefined, enabled?: boolean | undefined, now: Date
}): Promise<WebhookEndpointRow | null> {
  const r = await q.query<WebhookEndpointRow>(
    `UPDATE webhook_endpoints SET
        url = COALESCE($3, url),
        event_types = CASE WHEN $4::boolean THEN $5::text[] ELSE event_types END,
        enabled = COALESCE($6, enabled),
        disabled_reason = CASE WHEN $6 IS NOT NULL THEN NULL ELSE disabled_reason END,
        failing_since = CASE WHEN $6 THEN NULL ELSE failing_since END,
        updated_at = $7
      WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [workspaceId, id, change.url ?? null, change.eventTypes !== undefined, change.eventTypes ?? null,
      change.enabled ?? null, change.now])
  return r.rows[0] ?? null
}

export async function deleteWebhookEndpoint (q: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const r = await q.query('DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND id = $2', [workspaceId, id])
  return r.rowCount > 0
}

export async function rotateWebhookSecret (q: Queryable, workspaceId: string, id: string, rotation: {
  secretEnc: string, previousSecretEnc: string, previousUntil: Date, now: Date
}): Promise<boolean> {
  const r = await q.query(
    `UPDATE webhook_endpoints SET secret_enc = $3, previous_secret_enc = $4, previous_secret_until = $5, updated_at = $6
      WHERE workspace_id = $1 AND id = $2`,
    [workspaceId, id, rotation.secretEnc, rotation.previousSecretEnc, rotation.previousUntil, rotation.now])
  return r.rowCount > 0
}

/** The service disables an endpoint (410 Gone, or failing too long). True when this call did it. */
export async function disableWebhookEndpoint (
  q: Queryable, id: string, reason: 'gone' | 'failing', now: Date
): Promise<boolean> {
  const r = await q.query(
    'UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = $3 WHERE id = $1 AND enabled',
    [id, reason, now])
  return r.rowCount > 0
}

/** After an attempt: a success ends the failure streak, a failure starts it if none is running. */
export async function recordEndpointOutcome (
  q: Queryable, id: string, ok: boolean, now: Date
): Promise<Date | null> {
  const r = await q.query<{ failingSince: Date | null }>(
    `UPDATE webhook_endpoints SET failing_since = CASE WHEN $2 THEN NULL ELSE COALESCE(failing_since, $3) END
      WHERE id = $1 RETURNING failing_since AS "failingSince"`, [id, ok, now])
  return r.rows[0]?.failingSince ?? null
}

/** An endpoint's sealed signing secrets, for re-encryption (src/lib/reseal.ts). */
export type SealedEndpointSecrets = SealedRow<string, 'secretEnc' | 'previousSecretEnc'>

/** Endpoints in id order after `after` (a page of `limit`). */
export async function listSealedEndpointSecrets (
  q: Queryable, after: string | null, limit: number
): Promise<SealedEndpointSecrets[]> {
  const r = await q.query<{ id: string, secretEnc: string, previousSecretEnc: string | null }>(
    `SELECT id, secret_enc AS "secretEnc", previous_secret_enc AS "previousSecretEnc" FROM webhook_endpoints
      WHERE id > $1 ORDER BY id LIMIT $2`,
    [after ?? '00000000-0000-0000-0000-000000000000', limit])
  return r.rows.map(({ id, ...values }) => ({ id, values }))
}

/** Replaces one sealed secret if the row still holds `from`; false otherwise. */
export async function resealEndpointSecret (
  q: Queryable, id: string, column: 'secretEnc' | 'previousSecretEnc', from: string, to: string
): Promise<boolean> {
  const col = column === 'secretEnc' ? 'secret_enc' : 'previous_secret_enc'
  return await replaceSealed(q, { table: 'webhook_endpoints', key: 'id', id: [id] }, col, from, to)
}
