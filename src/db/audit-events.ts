import type { components } from '../generated/openapi.js'
import type { Queryable } from './client.js'

export type AuditAction = components['schemas']['AuditAction']

type ActorType = components['schemas']['AuditEvent']['actor']['type']

export interface AuditActor { type: ActorType, id: string | null, label: string | null }
interface AuditTarget {
  type: 'user' | 'invitation' | 'api_key' | 'session' | 'chat_installation' | 'invite_request' | 'workspace',
  id: string
}

export interface AuditEntry {
  workspaceId: string
  action: AuditAction
  actor: AuditActor
  target: AuditTarget | null
  /** Small, and never a token or secret. */
  payload?: Record<string, unknown>
  now: Date
}

/** Record an audit event. Call it with the transaction of the action it records. */
export async function insertAuditEvent (q: Queryable, entry: AuditEntry): Promise<void> {
  await q.query(
    `INSERT INTO audit_events (workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.workspaceId, entry.action, entry.actor.type, entry.actor.id, entry.actor.label, entry.target?.type ?? null,
      entry.target?.id ?? null, JSON.stringify(entry.payload ?? {}), entry.now
    ])
}

export interface AuditEventRow {
  id: string
  action: AuditAction
  actorType: ActorType
  actorId: string | null
  actorLabel: string | null
  targetType: string | null
  targetId: string | null
  payload: Record<string, unknown>
  createdAt: Date
}

/**
 * Newest first; `before` is the id cursor (ids grow with time). ORDER BY names the table's column:
 * a bare `id` would be the text alias of the select list and sort '9' after '10'.
 */
export async function listAuditEvents (
  q: Queryable,
  filter: {
    workspaceId: string,
    action?: string | undefined,
    targetType?: string | undefined,
    targetId?: string | undefined,
    before?: string | undefined,
    limit: number
  }
): Promise<AuditEventRow[]> {
  const r = await q.query<AuditEventRow>(
    `SELECT id::text AS id, action, actor_type AS "actorType", actor_id AS "actorId", actor_label AS "actorLabel",
            target_type AS "targetType", target_id AS "targetId", payload, created_at AS "createdAt"
       FROM audit_events
      WHERE workspace_id = $1
        AND ($2::text IS NULL OR action = $2)
        AND ($3::text IS NULL OR target_type = $3)
        AND ($4::text IS NULL OR target_id = $4)
        AND ($5::bigint IS NULL OR id < $5)
      ORDER BY audit_events.id DESC LIMIT $6`,
    [
      filter.workspaceId, filter.action ?? null, filter.targetType ?? null, filter.targetId ?? null,
      filter.before ?? null, filter.limit
    ])
  return r.rows
}
