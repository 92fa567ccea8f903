import type { components } from '../generated/openapi.js'
import type { Ports } from '../ports/index.js'
import { listAuditEvents, type AuditAction, type AuditEventRow } from '../db/audit-events.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { queryInstant } from '../lib/date-time.js'

/** An audit event as the contract's AuditEvent schema shows it. */
type AuditEventView = components['schemas']['AuditEvent']

interface AuditQuery {
  action?: AuditAction | undefined
  targetType?: string | undefined
  targetId?: string | undefined
  /** The actor's e-mail (compared lower-cased). */
  actor?: string | undefined
  source?: AuditEventView['source'] | undefined
  since?: string | undefined
  until?: string | undefined
  limit: number
  cursor?: string | undefined
}

export interface AuditTrailService {
  /** One page of a workspace's audit trail, newest first. */
  list(workspaceId: string, q: AuditQuery): Promise<components['schemas']['AuditEventList']>
}

function toAuditEventView (row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
    source: row.source,
    target: row.targetType !== null && row.targetId !== null ? { type: row.targetType, id: row.targetId } : null,
    payload: row.payload,
    createdAt: row.createdAt.toISOString()
  }
}

export function createAuditTrailService (deps: Pick<Ports, 'db'>): AuditTrailService {
  return {
    async list (workspaceId, q) {
      // Ids grow with time: the position's id alone orders the trail.
      const before = q.cursor !== undefined ? decodeCursor(q.cursor).id : undefined
      const rows = await listAuditEvents(
        deps.db,
        {
          workspaceId,
          action: q.action,
          targetType: q.targetType,
          targetId: q.targetId,
          actor: q.actor?.trim().toLowerCase(),
          source: q.source,
          since: queryInstant('since', q.since),
          until: queryInstant('until', q.until),
          before,
          limit: q.limit + 1
        }
      )
      const { page, nextCursor } = pageOf(rows, q.limit, r => r)
      return { items: page.map(toAuditEventView), nextCursor }
    }
  }
}
