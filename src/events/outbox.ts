import type { Queryable } from '../db/client.js'
import { insertAuditEvent, insertAuditEvents, type AuditEntry } from '../db/audit-events.js'
import { insertDeliveriesForEvent, insertDeliveriesForEvents } from '../db/webhook-deliveries.js'
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
  /**
   * `record` for many entries at once (a batch of invitations): the same rows, deliveries and
   * jobs, written by one statement each instead of two or more per entry. Returns the ids in order.
   */
  recordMany(tx: Queryable, entries: AuditEntry[]): Promise<string[]>
}

export function createEventOutbox (jobs: JobEngine): EventOutbox {
  // One source per outbox: the ids this process records sort in the order they were recorded.
  const newId = uuidV7Source()
  const queueDeliveries = async (tx: Queryable, deliveries: string[]): Promise<void> => {
    if (deliveries.length === 0) return
    await jobs.sendMany(tx, 'webhook-delivery', deliveries.map(deliveryId => ({ deliveryId, attempt: 0 })))
    const wake = (): void => { jobs.wake('webhook-delivery') }
    if (tx.afterCommit !== undefined) tx.afterCommit(wake)
    else wake()
  }
  return {
    async record (tx, entry) {
      const type = eventTypeOf(entry.action)
      const id = newId(entry.now)
      await insertAuditEvent(tx, id, entry, type)
      if (type === null) return id
      const deliveries = await insertDeliveriesForEvent(
        tx, { workspaceId: entry.workspaceId, eventId: id, eventType: type, now: entry.now }
      )
      await queueDeliveries(tx, deliveries)
      return id
    },
    async recordMany (tx, entries) {
      const events = entries.map(entry => ({ id: newId(entry.now), entry, eventType: eventTypeOf(entry.action) }))
      await insertAuditEvents(tx, events)
      const deliveries = await insertDeliveriesForEvents(tx, events.flatMap(e => e.eventType === null
        ? []
        : [{ workspaceId: e.entry.workspaceId, eventId: e.id, eventType: e.eventType, now: e.entry.now }]))
      await queueDeliveries(tx, deliveries)
      return events.map(e => e.id)
    }
  }
}
