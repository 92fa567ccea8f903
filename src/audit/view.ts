import type { components } from '../generated/openapi.js'
import type { AuditEventRow } from '../db/audit-events.js'

/** An audit event as the contract's AuditEvent schema shows it (the list's item, an export's line). */
export type AuditEventView = components['schemas']['AuditEvent']

export function toAuditEventView (row: AuditEventRow): AuditEventView {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
    source: row.source,
    target: row.targetType !== null && row.targetId !== null ? { type: row.targetType, id: row.targetId } : null,
    payload: row.payload,
    createdAt: row.createdAt.toISOString(),
    workspaceId: row.workspaceId,
    sequence: row.sequence,
    previousHash: row.previousHash,
    hash: row.hash
  }
}
