import type { Queryable } from '../db/client.js'
import type { AuditEntry } from '../db/audit-events.js'

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
