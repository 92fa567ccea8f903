import type { components } from '../generated/openapi.js'
import type { Queryable } from './client.js'

export type AuditAction = components['schemas']['AuditAction']
export type EventType = components['schemas']['EventType']
/** The door an action came through (REST, MCP, the chat bot, a browser page, the service itself). */
type EventSource = components['schemas']['Event']['source']

type ActorType = components['schemas']['AuditEvent']['actor']['type']

/** Who acted, through which door and in which request (requestId: the HTTP request or chat event). */
export interface AuditActor {
  type: ActorType
  id: string | null
  label: string | null
  source: EventSource
  requestId: string | null
}
interface AuditTarget {
  type: 'user' | 'invitation' | 'api_key' | 'session' | 'chat_installation' | 'webhook_endpoint' | 'invite_request'
    | 'workspace' | 'invite_link' | 'domain' | 'sso_connection',
  id: string
}

export interface AuditEntry {
  workspaceId: string
  action: AuditAction
  actor: AuditActor
  target: AuditTarget | null
  /** Small, and never a token, a link or a secret: it is also the event's `data`. */
  payload?: Record<string, unknown>
  /** The Idempotency-Key of the request that caused the change, if it had one. */
  idempotencyKey?: string | undefined
  now: Date
}

/**
 * Record an audit event under `id` (a UUIDv7: ids grow with time); `eventType` marks it as an
 * event of the catalogue (feed and webhooks). Call it with the transaction of the action it records.
 */
export async function insertAuditEvent (
  q: Queryable, id: string, entry: AuditEntry, eventType: EventType | null
): Promise<void> {
  await q.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source, request_id, idempotency_key)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [
      id, entry.workspaceId, entry.action, entry.actor.type, entry.actor.id, entry.actor.label,
      entry.target?.type ?? null, entry.target?.id ?? null, JSON.stringify(entry.payload ?? {}), entry.now, eventType,
      entry.actor.source,
      entry.actor.requestId, entry.idempotencyKey ?? null
    ])
}

/**
 * Many audit events in one statement (arrays unnested), as `insertAuditEvent` writes each: a
 * batch of 1,000 invitations records its 1,000 events in one round trip instead of 1,000.
 */
export async function insertAuditEvents (
  q: Queryable, events: Array<{ id: string, entry: AuditEntry, eventType: EventType | null }>
): Promise<void> {
  if (events.length === 0) return
  const col = <T>(f: (e: { id: string, entry: AuditEntry, eventType: EventType | null }) => T): T[] => events.map(f)
  await q.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source, request_id, idempotency_key)
     SELECT e.id, e.workspace_id, e.action, e.actor_type, e.actor_id, e.actor_label, e.target_type, e.target_id,
            e.payload::jsonb, e.created_at, e.event_type, e.source, e.request_id, e.idempotency_key
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::text[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[])
         AS e(id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id, payload, created_at,
              event_type, source, request_id, idempotency_key)`,
    [
      col(e => e.id), col(e => e.entry.workspaceId), col(e => e.entry.action), col(e => e.entry.actor.type),
      col(e => e.entry.actor.id), col(e => e.entry.actor.label), col(e => e.entry.target?.type ?? null),
      col(e => e.entry.target?.id ?? null), col(e => JSON.stringify(e.entry.payload ?? {})),
      // ISO strings: both drivers pass a text array through; a Date inside an array is pg's alone.
      col(e => e.entry.now.toISOString()), col(e => e.eventType), col(e => e.entry.actor.source),
      col(e => e.entry.actor.requestId), col(e => e.entry.idempotencyKey ?? null)
    ])
}

export interface AuditEventRow {
  id: string
  action: AuditAction
  actorType: ActorType
  actorId: string | null
  actorLabel: string | null
  source: EventSource
  targetType: string | null
  targetId: string | null
  payload: Record<string, unknown>
  createdAt: Date
}

/** What the trail's list and its export filter on, each optional but the workspace. */
export interface AuditFilter {
  workspaceId: string
  action?: string | undefined
  targetType?: string | undefined
  targetId?: string | undefined
  /** The actor's label (their e-mail), lower-cased. */
  actor?: string | undefined
  source?: EventSource | undefined
  since?: Date | undefined
  until?: Date | undefined
}

const AUDIT_COLUMNS = `id::text AS id, action, actor_type AS "actorType", actor_id AS "actorId",
  actor_label AS "actorLabel", source, target_type AS "targetType", target_id AS "targetId", payload,
  created_at AS "createdAt"`

// The filter as $1..$8 (a position's $9 and the limit's $10 follow).
const FILTER = `workspace_id = $1
        AND ($2::text IS NULL OR action = $2)
        AND ($3::text IS NULL OR target_type = $3)
        AND ($4::text IS NULL OR target_id = $4)
        AND ($5::text IS NULL OR actor_label = $5)
        AND ($6::text IS NULL OR source = $6)
        AND ($7::timestamptz IS NULL OR created_at >= $7)
        AND ($8::timestamptz IS NULL OR created_at < $8)`

function filterParams (f: AuditFilter): unknown[] {
  return [
    f.workspaceId, f.action ?? null, f.targetType ?? null, f.targetId ?? null, f.actor ?? null, f.source ?? null,
    f.since ?? null, f.until ?? null
  ]
}

/**
 * Newest first; `before` is the id cursor (UUIDv7: ids grow with time). ORDER BY names the
 * table's column: a bare `id` would be the text alias of the select list.
 */
export async function listAuditEvents (
  q: Queryable, filter: AuditFilter & { before?: string | undefined, limit: number }
): Promise<AuditEventRow[]> {
  const r = await q.query<AuditEventRow>(
    `SELECT ${AUDIT_COLUMNS} FROM audit_events
      WHERE ${FILTER} AND ($9::uuid IS NULL OR audit_events.id < $9)
      ORDER BY audit_events.id DESC LIMIT $10`,
    [...filterParams(filter), filter.before ?? null, filter.limit])
  return r.rows
}

/** Oldest first, after the id `after`: a page of an export (src/audit/export.ts). */
export async function listAuditEventsAfter (
  q: Queryable, filter: AuditFilter & { after: string | null, limit: number }
): Promise<AuditEventRow[]> {
  const r = await q.query<AuditEventRow>(
    `SELECT ${AUDIT_COLUMNS} FROM audit_events
      WHERE ${FILTER} AND ($9::uuid IS NULL OR audit_events.id > $9)
      ORDER BY audit_events.id LIMIT $10`,
    [...filterParams(filter), filter.after, filter.limit])
  return r.rows
}

/** An audit row that is an event, with what its envelope needs. */
export interface EventRow {
  id: string
  workspaceId: string
  type: EventType
  actorType: ActorType
  actorId: string | null
  source: EventSource
  requestId: string | null
  idempotencyKey: string | null
  targetType: string | null
  targetId: string | null
  payload: Record<string, unknown>
  createdAt: Date
}

const EVENT_COLUMNS = `id::text AS id, workspace_id AS "workspaceId", event_type AS type, actor_type AS "actorType",
  actor_id AS "actorId", source, request_id AS "requestId", idempotency_key AS "idempotencyKey",
  target_type AS "targetType", target_id AS "targetId", payload,
  created_at AS "createdAt"`

/**
 * The audit row a webhook delivery sends. Its `type` is null for a row outside the catalogue (a
 * test event, sent to one endpoint as the delivery's own event type, is in no feed).
 */
export async function findEvent (
  q: Queryable, id: string
): Promise<(Omit<EventRow, 'type'> & { type: EventType | null }) | null> {
  const r = await q.query<Omit<EventRow, 'type'> & { type: EventType | null }>(
    `SELECT ${EVENT_COLUMNS} FROM audit_events WHERE id = $1`, [id])
  return r.rows[0] ?? null
}

/**
 * A workspace's events oldest first, after an id and not before `since` (the feed's horizon).
 * The read starts at the first event within the horizon (ids grow with time), found in one probe
 * of the events' time index: from the workspace's first event or an old cursor, it read the whole
 * history before the horizon and dropped it (a year of 1M events: 0.4 s for one page). No event
 * within the horizon: no rows.
 */
export async function listEvents (
  q: Queryable,
  filter: { workspaceId: string, after: string | null, since: Date, types: readonly string[] | null, limit: number }
): Promise<EventRow[]> {
  const r = await q.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM audit_events
      WHERE workspace_id = $1 AND event_type IS NOT NULL
        AND ($2::uuid IS NULL OR audit_events.id > $2)
        AND audit_events.id >= (SELECT h.id FROM audit_events h
                                 WHERE h.workspace_id = $1 AND h.event_type IS NOT NULL AND h.created_at >= $3
                                 ORDER BY h.created_at, h.id LIMIT 1)
        AND created_at >= $3
        AND ($4::text[] IS NULL OR event_type = ANY($4::text[]))
      ORDER BY audit_events.id LIMIT $5`,
    [filter.workspaceId, filter.after, filter.since, filter.types, filter.limit])
  return r.rows
}
