import type { Database } from '../db/client.js'
import { listAuditEvents, type AuditAction, type AuditEventRow } from '../db/audit-events.js'
import { serviceError } from '../errors.js'

/** An audit event as the contract's AuditEvent schema shows it. */
export interface AuditEventView {
  id: string
  action: AuditAction
  actor: { type: AuditEventRow['actorType'], id: string | null, label: string | null }
  target: { type: string, id: string } | null
  payload: Record<string, unknown>
  createdAt: string
}

export interface AuditQuery {
  action?: AuditAction | undefined
  targetType?: string | undefined
  targetId?: string | undefined
  limit: number
  cursor?: string | undefined
}

export interface AuditTrailService {
  /** One page of a workspace's audit trail, newest first. */
  list(workspaceId: string, q: AuditQuery): Promise<{ items: AuditEventView[], nextCursor: string | null }>
}

// The cursor is the id of the last event shown, base64url-encoded so clients treat it as opaque.
export function encodeAuditCursor (id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url')
}

export function decodeAuditCursor (cursor: string): string {
  const id = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : ''
  // Ids are bigserial: a positive integer of at most 19 digits, or the cursor is not ours.
  if (!/^[1-9][0-9]{0,18}$/.test(id) || BigInt(id) > 9223372036854775807n) {
    throw serviceError('VALIDATION_FAILED', ['querystring.cursor is not a cursor from this list'], { errors: [{ in: 'querystring', field: 'cursor', message: 'is not a cursor from this list' }] })
  }
  return id
}

export function toAuditEventView (row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
    target: row.targetType !== null && row.targetId !== null ? { type: row.targetType, id: row.targetId } : null,
    payload: row.payload,
    createdAt: row.createdAt.toISOString()
  }
}

export function createAuditTrailService (deps: { db: Database }): AuditTrailService {
  return {
    async list (workspaceId, q) {
      const before = q.cursor !== undefined ? decodeAuditCursor(q.cursor) : undefined
      // One row more than asked tells whether a next page exists without a count query.
      const rows = await listAuditEvents(deps.db, { workspaceId, action: q.action, targetType: q.targetType, targetId: q.targetId, before, limit: q.limit + 1 })
      const page = rows.slice(0, q.limit)
      const last = page.at(-1)
      return {
        items: page.map(toAuditEventView),
        nextCursor: rows.length > q.limit && last !== undefined ? encodeAuditCursor(last.id) : null
      }
    }
  }
}
