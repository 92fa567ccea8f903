import type { Queryable } from '../db/client.js'
import { insertAuditEvent, type AuditEntry } from '../db/audit-events.js'
import { insertDeliveriesForEvent } from '../db/webhook-deliveries.js'
import type { JobEngine } from '../jobs/engine.js'
import { uuidV7Source } from '../lib/uuid.js'
import { eventTypeOf } from './catalogue.js'

/**
 * The one way the domain records what happened: `record(tx, entry)` inside the transaction of the
 * change. It writes the audit row (the outbox); when the action is in the event catalogue it also
 * writes one webhook delivery per subscribed endpoint and queues their jobs, in that same
 * transaction, so an event is delivered iff the change commits. Other consumers (chat DMs,
 * metrics) hook in here.
 */
export interface EventOutbox {
  /** Returns the audit row's id. */
  record(tx: Queryable, entry: AuditEntry): Promise<string>
}

export function createEventOutbox (jobs: JobEngine): EventOutbox {
  // One source per outbox: the ids this process records sort in the order they were recorded.
  const newId = uuidV7Source()
  return {
    async record (tx, entry) {
      const type = eventTypeOf(entry.action)
      const id = newId(entry.now)
      await insertAuditEvent(tx, id, entry, type)
      if (type === null) return id
      const deliveries = await insertDeliveriesForEvent(
        tx, { workspaceId: entry.workspaceId, eventId: id, eventType: type, now: entry.now }
      )
      for (const deliveryId of deliveries) await jobs.send(tx, 'webhook-delivery', { deliveryId, attempt: 0 })
      if (deliveries.length > 0) {
        const wake = (): void => { jobs.wake('webhook-delivery') }
        if (tx.afterCommit !== undefined) tx.afterCommit(wake)
        else wake()
      }
      return id
    }
  }
}
