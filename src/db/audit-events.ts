import type { components } from '../generated/openapi.js'
import type { Queryable } from './client.js'
import { canonicalHalves, recordHash, type ChainedFields } from '../lib/audit-chain.js'

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
    | 'workspace' | 'invite_link' | 'domain' | 'sso_connection' | 'audit_stream',
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

/** What a record's hash covers (src/lib/audit-chain.ts), as its export line will show it. */
function chainedFields (id: string, entry: AuditEntry): Omit<ChainedFields, 'previousHash'> {
  return {
    id,
    workspaceId: entry.workspaceId,
    action: entry.action,
    actor: { type: entry.actor.type, id: entry.actor.id, label: entry.actor.label },
    source: entry.actor.source,
    target: entry.target === null ? null : { type: entry.target.type, id: entry.target.id },
    // As it comes back from jsonb: what JSON keeps (no undefined members, dates as strings).
    payload: JSON.parse(JSON.stringify(entry.payload ?? {})) as Record<string, unknown>,
    createdAt: entry.now.toISOString()
  }
}

/**
 * Record an audit event under `id` (a UUIDv7: ids grow with time); `eventType` marks it as an
 * event of the catalogue (feed and webhooks). Call it with the transaction of the action it records.
 *
 * One statement chains it (issue 55): the upsert takes the workspace's chain head and locks it
 * until the transaction ends — a concurrent writer of the same workspace waits, then reads the head
 * this one left — and hashes the canonical form's two halves around the head's hash, so the chain
 * cannot fork even when `q` is no transaction.
 */
export async function insertAuditEvent (
  q: Queryable, id: string, entry: AuditEntry, eventType: EventType | null
): Promise<void> {
  const { before, after } = canonicalHalves(chainedFields(id, entry))
  await q.query(
    `WITH head AS (
       INSERT INTO audit_chain_heads AS h (workspace_id, last_seq, last_hash, previous_hash)
       VALUES ($2, 1, encode(sha256(convert_to($15::text || 'null' || $16::text, 'UTF8')), 'hex'), NULL)
       ON CONFLICT (workspace_id) DO UPDATE
         SET last_seq = h.last_seq + 1,
             previous_hash = h.last_hash,
             last_hash = encode(sha256(convert_to(
               $15::text || CASE WHEN h.last_hash IS NULL THEN 'null' ELSE '"' || h.last_hash || '"' END || $16::text,
               'UTF8')), 'hex')
       RETURNING last_seq, last_hash, previous_hash
     )
     INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source, request_id, idempotency_key,
                               chain_seq, previous_hash, hash)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
            head.last_seq, head.previous_hash, head.last_hash FROM head`,
    [
      id, entry.workspaceId, entry.action, entry.actor.type, entry.actor.id, entry.actor.label,
      entry.target?.type ?? null, entry.target?.id ?? null, JSON.stringify(entry.payload ?? {}), entry.now, eventType,
      entry.actor.source,
      entry.actor.requestId, entry.idempotencyKey ?? null, before, after
    ])
}

type BatchEvent = { id: string, entry: AuditEntry, eventType: EventType | null }

/**
 * Takes the chain heads of `workspaceIds` (sorted: two batches lock in one order, never in a
 * cycle) for the rest of the transaction; returns the last place and hash of each.
 */
async function lockChainHeads (
  q: Queryable, workspaceIds: readonly string[]
): Promise<Map<string, { seq: number, hash: string | null }>> {
  const heads = new Map<string, { seq: number, hash: string | null }>()
  for (const workspaceId of [...workspaceIds].sort()) {
    const r = await q.query<{ seq: number, hash: string | null }>(
      `INSERT INTO audit_chain_heads AS h (workspace_id, last_seq, last_hash, previous_hash) VALUES ($1, 0, NULL, NULL)
       ON CONFLICT (workspace_id) DO UPDATE SET last_seq = h.last_seq
       RETURNING last_seq::float8 AS seq, last_hash AS hash`, [workspaceId])
    heads.set(workspaceId, r.rows[0] as { seq: number, hash: string | null })
  }
  return heads
}

/**
 * Many audit events in one statement (arrays unnested), as `insertAuditEvent` writes each: a
 * batch of 1,000 invitations records its 1,000 events in one round trip instead of 1,000. The
 * heads are locked first and the hashes made here, in order: so it needs a transaction, which
 * holds the locks until the rows and the new heads are written.
 */
export async function insertAuditEvents (q: Queryable, events: BatchEvent[]): Promise<void> {
  if (events.length === 0) return
  if (q.afterCommit === undefined) throw new Error('insertAuditEvents chains a batch inside a transaction')
  const heads = await lockChainHeads(q, [...new Set(events.map(e => e.entry.workspaceId))])
  const chained = events.map(e => {
    const head = heads.get(e.entry.workspaceId) as { seq: number, hash: string | null }
    const previousHash = head.hash
    head.seq += 1
    head.hash = recordHash({ ...chainedFields(e.id, e.entry), previousHash })
    return { ...e, seq: head.seq, previousHash, hash: head.hash }
  })
  const col = <T>(f: (e: typeof chained[number]) => T): T[] => chained.map(f)
  const ws = [...heads.keys()]
  await q.query(
    `WITH heads AS (
       UPDATE audit_chain_heads h SET last_seq = u.seq, previous_hash = u.previous_hash, last_hash = u.hash
         FROM unnest($18::uuid[], $19::bigint[], $20::text[], $21::text[]) AS u(workspace_id, seq, previous_hash, hash)
        WHERE h.workspace_id = u.workspace_id
     )
     INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source, request_id, idempotency_key,
                               chain_seq, previous_hash, hash)
     SELECT e.id, e.workspace_id, e.action, e.actor_type, e.actor_id, e.actor_label, e.target_type, e.target_id,
            e.payload::jsonb, e.created_at, e.event_type, e.source, e.request_id, e.idempotency_key,
            e.chain_seq, e.previous_hash, e.hash
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                   $9::text[], $10::timestamptz[], $11::text[], $12::text[], $13::text[], $14::text[],
                   $15::bigint[], $16::text[], $17::text[])
         AS e(id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id, payload, created_at,
              event_type, source, request_id, idempotency_key, chain_seq, previous_hash, hash)`,
    [
      col(e => e.id), col(e => e.entry.workspaceId), col(e => e.entry.action), col(e => e.entry.actor.type),
      col(e => e.entry.actor.id), col(e => e.entry.actor.label), col(e => e.entry.target?.type ?? null),
      col(e => e.entry.target?.id ?? null), col(e => JSON.stringify(e.entry.payload ?? {})),
      // ISO strings: both drivers pass a text array through; a Date inside an array is pg's alone.
      col(e => e.entry.now.toISOString()), col(e => e.eventType), col(e => e.entry.actor.source),
      col(e => e.entry.actor.requestId), col(e => e.entry.idempotencyKey ?? null),
      col(e => String(e.seq)), col(e => e.previousHash), col(e => e.hash),
      ws, ws.map(w => String(heads.get(w)?.seq)),
      ws.map(w => chained.findLast(e => e.entry.workspaceId === w)?.previousHash ?? null),
      ws.map(w => heads.get(w)?.hash ?? null)
    ])
}

export interface AuditEventRow {
  id: string
  workspaceId: string
  action: AuditAction
  actorType: ActorType
  actorId: string | null
  actorLabel: string | null
  source: EventSource
  targetType: string | null
  targetId: string | null
  payload: Record<string, unknown>
  createdAt: Date
  /** The record's place in its workspace's chain and the hashes; null for a record older than the chain. */
  sequence: number | null
  previousHash: string | null
  hash: string | null
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

const AUDIT_COLUMNS = `id::text AS id, workspace_id::text AS "workspaceId", action, actor_type AS "actorType",
  actor_id AS "actorId", actor_label AS "actorLabel", source, target_type AS "targetType", target_id AS "targetId",
  payload,
  created_at AS "createdAt", chain_seq::float8 AS sequence, previous_hash AS "previousHash", hash`

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

/** What one pass of retention deleted from a workspace's chain (null bounds: nothing chained). */
export interface DeletedChain {
  count: number
  fromSequence: number | null
  toSequence: number | null
  /** The hash of the last record deleted: the first record kept carries it as its previousHash. */
  lastHash: string | null
}

/**
 * Deletes up to `limit` of a workspace's chained records older than `before`, from the chain's
 * start and without a hole: the prefix that ends before the first record at or after `before`
 * (a record written late in a race is kept with its neighbours, never left as a gap).
 */
export async function deleteChainPrefixBefore (
  q: Queryable, workspaceId: string, before: Date, limit: number
): Promise<DeletedChain> {
  const r = await q.query<DeletedChain>(
    `WITH keep AS (
       SELECT min(chain_seq) AS seq FROM audit_events
        WHERE workspace_id = $1 AND chain_seq IS NOT NULL AND created_at >= $2
     ), doomed AS (
       SELECT e.id, e.chain_seq, e.hash FROM audit_events e, keep
        WHERE e.workspace_id = $1 AND e.chain_seq IS NOT NULL AND (keep.seq IS NULL OR e.chain_seq < keep.seq)
        ORDER BY e.chain_seq LIMIT $3
     ), gone AS (
       DELETE FROM audit_events a USING doomed d WHERE a.id = d.id RETURNING d.chain_seq, d.hash
     )
     SELECT count(*)::int AS count, min(chain_seq)::float8 AS "fromSequence", max(chain_seq)::float8 AS "toSequence",
            (SELECT g.hash FROM gone g ORDER BY g.chain_seq DESC LIMIT 1) AS "lastHash"
       FROM gone`, [workspaceId, before, limit])
  return r.rows[0] as DeletedChain
}

/** Deletes up to `limit` of a workspace's records older than the chain and than `before`. */
export async function deleteUnchainedBefore (
  q: Queryable, workspaceId: string, before: Date, limit: number
): Promise<number> {
  const r = await q.query(
    `DELETE FROM audit_events WHERE id IN (
       SELECT id FROM audit_events WHERE workspace_id = $1 AND chain_seq IS NULL AND created_at < $2 LIMIT $3)`,
    [workspaceId, before, limit])
  return r.rowCount
}
