import type { Database } from '../db/client.js'
import { deleteChainPrefixBefore, deleteUnchainedBefore, insertAuditEvent } from '../db/audit-events.js'
import { listAuditRetentions } from '../db/workspaces.js'
import { uuidV7Source } from '../lib/uuid.js'
import { systemActor } from './actor.js'

// The audit trail's retention (issue 55, item 3): a workspace that keeps its records for
// `auditRetentionDays` loses the older ones at each retention sweep (src/housekeeping/retention.ts)
// — from the chain's start, so no hole is left — and the deletion is itself a record,
// `audit.records_deleted`, written in the same transaction: the count, the bounds, and the hash of
// the last record deleted, which the first record kept carries as its previousHash. The chain that
// remains verifies from that anchor; an export made before still verifies on its own. The record
// is written straight to the trail, as the outbox writes any action that is no event of the
// catalogue (no feed, no webhook): the sweep runs below the services.

const DAY_MS = 86_400_000
/** Records deleted per workspace and sweep, in one transaction: a backlog goes over several sweeps. */
const AUDIT_RETENTION_BATCH = 10_000

/** One sweep over the workspaces with a retention; the records deleted in all. */
export async function sweepAuditTrails (db: Database, now: Date): Promise<number> {
  const newId = uuidV7Source()
  let total = 0
  for (const { workspaceId, days } of await listAuditRetentions(db)) {
    const before = new Date(now.getTime() - days * DAY_MS)
    total += await db.transaction(async tx => {
      const chain = await deleteChainPrefixBefore(tx, workspaceId, before, AUDIT_RETENTION_BATCH)
      const unchained = await deleteUnchainedBefore(tx, workspaceId, before, AUDIT_RETENTION_BATCH)
      if (chain.count + unchained === 0) return 0
      await insertAuditEvent(tx, newId(now), {
        workspaceId,
        action: 'audit.records_deleted',
        actor: systemActor('audit retention'),
        target: { type: 'workspace', id: workspaceId },
        payload: { ...chain, count: chain.count + unchained, before: before.toISOString(), retentionDays: days },
        now
      }, null)
      return chain.count + unchained
    })
  }
  return total
}
