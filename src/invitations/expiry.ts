import type { Clock } from '../clock.js'
import type { Database, Queryable } from '../db/client.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import { expireDueInvitations, type ExpiredInvitation } from '../db/invitations.js'
import { systemActor } from '../audit/actor.js'

// Invitations expire by a scheduled job (every minute, once across instances), not when someone
// reads them: the status changes and `invitation.expired` is recorded in one transaction, so the
// event is published within a minute of the expiry even if nobody looks.

const BATCH = 500

/** The audit/event entry of one expiry, whichever path found it (the sweep, or a new invite of the address). */
export async function recordExpiry (
  tx: Queryable, events: EventOutbox, inv: ExpiredInvitation, now: Date
): Promise<void> {
  await events.record(tx, {
    workspaceId: inv.workspaceId,
    action: 'invitation.expired',
    actor: systemActor('invitation expiry'),
    target: { type: 'invitation', id: inv.id },
    payload: { email: inv.email, role: inv.role },
    now
  })
}

/** Expires every due invitation, in batches; returns how many. */
export async function expireInvitations (deps: { db: Database, clock: Clock, events: EventOutbox }): Promise<number> {
  let total = 0
  for (;;) {
    const n = await deps.db.transaction(async tx => {
      const now = deps.clock.now()
      const expired = await expireDueInvitations(tx, now, BATCH)
      for (const inv of expired) await recordExpiry(tx, deps.events, inv, now)
      return expired.length
    })
    total += n
    if (n < BATCH) return total
  }
}
