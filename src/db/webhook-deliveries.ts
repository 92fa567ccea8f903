import type { Queryable } from './client.js'

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface WebhookDeliveryRow {
  id: string
  endpointId: string
  workspaceId: string
  eventId: string
  eventType: string
  status: DeliveryStatus
  attempts: number
  lastStatusCode: number | null
  lastError: string | null
  nextAttemptAt: Date | null
  deliveredAt: Date | null
  createdAt: Date
}

const COLUMNS = `id, endpoint_id AS "endpointId", workspace_id AS "workspaceId", event_id::text AS "eventId",
  event_type AS "eventType", status, attempts, last_status_code AS "lastStatusCode", last_error AS "lastError",
  next_attempt_at AS "nextAttemptAt", delivered_at AS "deliveredAt", created_at AS "createdAt"`

/** One delivery per enabled endpoint of the workspace subscribed to the event's type; their ids. */
export async function insertDeliveriesForEvent (
  q: Queryable, e: { workspaceId: string, eventId: string, eventType: string, now: Date }
): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (endpoint_id, workspace_id, event_id, event_type, next_attempt_at, created_at,
                                     updated_at)
     SELECT id, workspace_id, $2, $3, $4, $4, $4 FROM webhook_endpoints
      WHERE workspace_id = $1 AND enabled AND (event_types IS NULL OR $3 = ANY(event_types))
     RETURNING id`,
    [e.workspaceId, e.eventId, e.eventType, e.now])
  return r.rows.map(row => row.id)
}

/**
 * `insertDeliveriesForEvent` for many events in one statement: per event, one delivery per enabled
 * endpoint of its workspace subscribed to its type; their ids, in the events' order.
 */
export async function insertDeliveriesForEvents (
  q: Queryable, events: Array<{ workspaceId: string, eventId: string, eventType: string, now: Date }>
): Promise<string[]> {
  if (events.length === 0) return []
  const r = await q.query<{ id: string }>(
    `INSERT INTO webhook_deliveries (endpoint_id, workspace_id, event_id, event_type, next_attempt_at, created_at,
                                     updated_at)
     SELECT w.id, w.workspace_id, e.event_id, e.event_type, e.at, e.at, e.at
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[]) WITH ORDINALITY
              AS e(workspace_id, event_id, event_type, at, n)
       JOIN webhook_endpoints w ON w.workspace_id = e.workspace_id
      WHERE w.enabled AND (w.event_types IS NULL OR e.event_type = ANY(w.event_types))
      ORDER BY e.n
     RETURNING id`,
    [
      events.map(e => e.workspaceId), events.map(e => e.eventId), events.map(e => e.eventType),
      events.map(e => e.now.toISOString())
    ])
  return r.rows.map(row => row.id)
}

/** One delivery of an event to one endpoint whatever it subscribes to (a test event). */
export async function insertDelivery (
  q: Queryable, d: { endpointId: string, workspaceId: string, eventId: string, eventType: string, now: Date }
): Promise<WebhookDeliveryRow> {
  const r = await q.query<WebhookDeliveryRow>(
    `INSERT INTO webhook_deliveries (endpoint_id, workspace_id, event_id, event_type, next_attempt_at, created_at,
                                     updated_at)
     VALUES ($1, $2, $3, $4, $5, $5, $5) RETURNING ${COLUMNS}`,
    [d.endpointId, d.workspaceId, d.eventId, d.eventType, d.now])
  return r.rows[0] as WebhookDeliveryRow
}

/** forUpdate: locked while an attempt's outcome is written (a stale job's writer waits, then sees it moved on). */
export async function findDeliveryById (
  q: Queryable, id: string, opts: { forUpdate?: boolean } = {}
): Promise<WebhookDeliveryRow | null> {
  const r = await q.query<WebhookDeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE id = $1${opts.forUpdate === true ? ' FOR UPDATE' : ''}`, [id])
  return r.rows[0] ?? null
}

export async function findDelivery (q: Queryable, workspaceId: string, id: string): Promise<WebhookDeliveryRow | null> {
  const r = await q.query<WebhookDeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries WHERE workspace_id = $1 AND id = $2`, [workspaceId, id])
  return r.rows[0] ?? null
}

export async function recordAttempt (q: Queryable, id: string, a: {
  status: DeliveryStatus, statusCode: number | null, error: string | null, nextAttemptAt: Date | null, now: Date
}): Promise<WebhookDeliveryRow> {
  const r = await q.query<WebhookDeliveryRow>(
    `UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, last_status_code = $3, last_error = $4,
            next_attempt_at = $5, delivered_at = CASE WHEN $2 = 'succeeded' THEN $6 ELSE delivered_at END,
            updated_at = $6
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [id, a.status, a.statusCode, a.error, a.nextAttemptAt, a.now])
  return r.rows[0] as WebhookDeliveryRow
}

/** Pending again, to be attempted now (manual retry); attempts keep counting. */
export async function requeueDelivery (q: Queryable, id: string, now: Date): Promise<WebhookDeliveryRow> {
  const r = await q.query<WebhookDeliveryRow>(
    `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = $2, updated_at = $2
      WHERE id = $1 RETURNING ${COLUMNS}`, [id, now])
  return r.rows[0] as WebhookDeliveryRow
}

/** Newest first; `before` is the keyset position of the previous page's last row. */
export async function listDeliveries (q: Queryable, f: {
  endpointId: string,
  status?: DeliveryStatus | undefined,
  before?: { createdAt: Date, id: string } | undefined,
  limit: number
}): Promise<WebhookDeliveryRow[]> {
  const r = await q.query<WebhookDeliveryRow>(
    `SELECT ${COLUMNS} FROM webhook_deliveries
      WHERE endpoint_id = $1 AND ($2::text IS NULL OR status = $2)
        AND ($3::timestamptz IS NULL OR (created_at, id) < ($3, $4::uuid))
      ORDER BY created_at DESC, id DESC LIMIT $5`,
    [f.endpointId, f.status ?? null, f.before?.createdAt ?? null, f.before?.id ?? null, f.limit])
  return r.rows
}
