import type { Queryable } from './client.js'
import { deleteBatch } from './batch-delete.js'

// Chat-platform events, recorded before they are acknowledged and processed afterwards.
// event_id is the primary key: a retry of an event already recorded inserts nothing.
// While status is 'received', processed_at holds the time a worker claimed the row (a lease):
// a claim is one conditional UPDATE, so two instances never process the same event at once,
// and a claim whose worker died becomes claimable again once the lease has run out.
// payload_text, when set, is the exact payload as JSON text: `payload` is then a copy with the
// characters jsonb refuses replaced (src/lib/jsonb-safe.ts).

export type ChatEventStatus = 'received' | 'processed' | 'failed' | 'ignored'

export interface ChatEventRow {
  eventId: string
  teamId: string | null
  type: string
  payload: Record<string, unknown>
  /** The exact payload as JSON text, when `payload` had to be altered to be stored. */
  payloadText: string | null
  status: ChatEventStatus
  error: string | null
  receivedAt: Date
  processedAt: Date | null
}

/** Record an event; false when this event_id was already recorded (a duplicate or a retry). */
export async function insertChatEvent (
  q: Queryable,
  event: {
    eventId: string,
    teamId: string | null,
    type: string,
    payload: Record<string, unknown>,
    payloadText?: string | null,
    now: Date
  }
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO chat_events (event_id, team_id, type, payload, payload_text, status, received_at)
     VALUES ($1, $2, $3, $4, $5, 'received', $6) ON CONFLICT (event_id) DO NOTHING`,
    [event.eventId, event.teamId, event.type, JSON.stringify(event.payload), event.payloadText ?? null, event.now])
  return r.rowCount === 1
}

/** Claim an unprocessed event for processing; null when it is done or another worker holds it. */
export async function claimChatEvent (
  q: Queryable, eventId: string, now: Date, leaseMs: number
): Promise<ChatEventRow | null> {
  const r = await q.query<ChatEventRow>(
    `UPDATE chat_events SET processed_at = $2
      WHERE event_id = $1 AND status = 'received' AND (processed_at IS NULL OR processed_at <= $3)
      RETURNING event_id AS "eventId", team_id AS "teamId", type, payload, payload_text AS "payloadText", status, error,
                received_at AS "receivedAt", processed_at AS "processedAt"`,
    [eventId, now, new Date(now.getTime() - leaseMs)])
  return r.rows[0] ?? null
}

/** Events still waiting (never claimed, or their claim's lease ran out), oldest first. */
export async function listClaimableChatEvents (
  q: Queryable, now: Date, leaseMs: number, limit: number
): Promise<string[]> {
  const r = await q.query<{ eventId: string }>(
    `SELECT event_id AS "eventId" FROM chat_events
      WHERE status = 'received' AND (processed_at IS NULL OR processed_at <= $1)
      ORDER BY received_at LIMIT $2`,
    [new Date(now.getTime() - leaseMs), limit])
  return r.rows.map(row => row.eventId)
}

/** The outcome of processing. `error` is a short internal note, never a token. */
export async function finishChatEvent (
  q: Queryable,
  eventId: string,
  outcome: { status: Exclude<ChatEventStatus, 'received'>, error?: string | null, now: Date }
): Promise<void> {
  await q.query(
    "UPDATE chat_events SET status = $2, error = $3, processed_at = $4 WHERE event_id = $1 AND status = 'received'",
    [eventId, outcome.status, outcome.error ?? null, outcome.now])
}

/**
 * Housekeeping: up to `limit` finished events received before `before`. Rows still 'received'
 * stay (the sweep in the Slack service owns them); a retry of a deleted event would be recorded
 * again, so `before` must lie well beyond the platform's retry window (Slack: about an hour).
 */
export async function deleteFinishedChatEvents (q: Queryable, before: Date, limit: number): Promise<number> {
  const where = "received_at < $1 AND status <> 'received'"
  return await deleteBatch(q, { table: 'chat_events', key: 'event_id', where }, before, limit)
}
