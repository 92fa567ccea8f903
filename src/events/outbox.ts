import type { Queryable } from '../db/client.js'
import { insertAuditEvent, insertAuditEvents } from '../db/audit-events.js'
import { insertDeliveriesForEvent, insertDeliveriesForEvents } from '../db/webhook-deliveries.js'
import { uuidV7Source } from '../lib/uuid.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import type { JobEngine } from '../ports/job-engine.js'
import { eventTypeOf } from './catalogue.js'

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
