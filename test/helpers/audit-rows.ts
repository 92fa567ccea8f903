import type { Queryable } from '../../src/db/client.js'

// Audit records written straight into audit_events, many at a time, for the tests that need more
// of them than the service would make in a test's time (the export's pages, the console's export).

/** A record as audit_events holds it; `id` a UUIDv7 of `createdAt` (src/lib/uuid.ts) so ids sort by time. */
export interface AuditRow {
  id: string
  workspaceId: string
  action: string
  actorType: 'user' | 'api_key' | 'system' | 'chat_platform'
  actorId: string | null
  actorLabel: string | null
  targetType: string | null
  targetId: string | null
  payload: Record<string, unknown>
  createdAt: Date
  source: string
}

/** Writes `rows`, 500 a statement. */
export async function insertAuditRows (db: Queryable, rows: readonly AuditRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500)
    const col = <T>(f: (r: AuditRow) => T): T[] => chunk.map(f)
    await db.query(
      `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                                 payload, created_at, source)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                            $8::text[], $9::jsonb[], $10::timestamptz[], $11::text[])`,
      [col(r => r.id), col(r => r.workspaceId), col(r => r.action), col(r => r.actorType), col(r => r.actorId),
        col(r => r.actorLabel), col(r => r.targetType), col(r => r.targetId), col(r => JSON.stringify(r.payload)),
        col(r => r.createdAt.toISOString()), col(r => r.source)])
  }
}
