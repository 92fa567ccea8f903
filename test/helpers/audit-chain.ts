import type { TestApp } from './build.js'
import { insertAuditEvent } from '../../src/db/audit-events.js'
import { systemActor } from '../../src/audit/actor.js'
import { uuidV7Source } from '../../src/lib/uuid.js'

// Audit records written one at a time through the chained insert, a second apart on the test's
// clock, for the tests of the chain's proof (test/audit/).

/** A writer of `invitation.created` records of a workspace by the system actor `label`; each returns its id. */
export function chainedRecords (h: TestApp, workspaceId: string, label: string): (n: number) => Promise<string> {
  const newId = uuidV7Source()
  return async n => {
    h.clock.advance(1000)
    const id = newId(h.clock.now())
    await insertAuditEvent(h.db, id, {
      workspaceId,
      action: 'invitation.created',
      actor: systemActor(label),
      target: { type: 'invitation', id: `inv-${n}` },
      payload: { n, email: `p${n}@example.com` },
      now: h.clock.now()
    }, null)
    return id
  }
}
