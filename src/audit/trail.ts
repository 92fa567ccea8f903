import type { components } from '../generated/openapi.js'
import type { Ports } from '../ports/index.js'
import type { Readable } from 'node:stream'
import { listAuditEvents, type AuditAction, type AuditFilter } from '../db/audit-events.js'
import { exportAuditTrail, type ExportFormat } from './export.js'
import { toAuditEventView, type AuditEventView } from './view.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { queryInstant } from '../lib/date-time.js'

interface AuditFilterQuery {
  action?: AuditAction | undefined
  targetType?: string | undefined
  targetId?: string | undefined
  /** The actor's e-mail (compared lower-cased). */
  actor?: string | undefined
  source?: AuditEventView['source'] | undefined
  since?: string | undefined
  until?: string | undefined
}

interface AuditQuery extends AuditFilterQuery {
  limit: number
  cursor?: string | undefined
}

export interface AuditTrailService {
  /** One page of a workspace's audit trail, newest first. */
  list(workspaceId: string, q: AuditQuery): Promise<components['schemas']['AuditEventList']>
  /** The records the filters select, oldest first, after `after`, streamed as `format` (src/audit/export.ts). */
  export(workspaceId: string, q: AuditFilterQuery & { after?: string | undefined }, format: ExportFormat): Readable
}

function filterOf (workspaceId: string, q: AuditFilterQuery): AuditFilter {
  return {
    workspaceId,
    action: q.action,
    targetType: q.targetType,
    targetId: q.targetId,
    actor: q.actor?.trim().toLowerCase(),
    source: q.source,
    since: queryInstant('since', q.since),
    until: queryInstant('until', q.until)
  }
}

export function createAuditTrailService (deps: Pick<Ports, 'db' | 'log'>): AuditTrailService {
  return {
    async list (workspaceId, q) {
      // Ids grow with time: the position's id alone orders the trail.
      const before = q.cursor !== undefined ? decodeCursor(q.cursor).id : undefined
      const rows = await listAuditEvents(deps.db, { ...filterOf(workspaceId, q), before, limit: q.limit + 1 })
      const { page, nextCursor } = pageOf(rows, q.limit, r => r)
      return { items: page.map(toAuditEventView), nextCursor }
    },

    export (workspaceId, q, format) {
      return exportAuditTrail(deps, { filter: filterOf(workspaceId, q), after: q.after ?? null, format })
    }
  }
}
