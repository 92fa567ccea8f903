import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import { releaseSendLease, type SendLease } from '../db/invitations.js'
import { serviceError } from '../errors.js'

// Rotating an invitation's token and sending the e-mail that carries it are one ordered step,
// guarded by a send lease on the invitation row (migration 004). The statement that rotates the
// token takes the lease itself, so two requests (in one process or in several, on PostgreSQL or
// PGlite alike: no advisory locks) never rotate one invitation while the other's e-mail is on
// its way; the newest e-mail therefore always carries the working link. A request that finds the
// lease held waits for it (polling, bounded), then rotates and sends in its turn.

/** Seconds a client is told to wait when the lease stayed busy for the whole wait. */
const BUSY_RETRY_AFTER_SECONDS = 5
const POLL_MS = [20, 40, 80, 160, 250]

export interface SendLeaseDeps { db: Database, clock: Clock, log: Logger, leaseMs: number }

/**
 * `rotate` rotates the token and takes the lease in its statement (null: another owner holds
 * it); `send` delivers with the new token while the lease is held. The lease is released after
 * the send, whatever its outcome, and runs out by itself after `leaseMs` if this process dies.
 */
export async function underSendLease<Row extends { id: string }, R> (
  deps: SendLeaseDeps,
  rotate: (lease: SendLease, now: Date) => Promise<Row | null>,
  send: (row: Row) => Promise<R>
): Promise<R> {
  // The wait is bounded in real time (a fake clock in tests does not move by itself): one lease.
  const giveUpAt = performance.now() + deps.leaseMs
  for (let attempt = 0; ; attempt++) {
    const now = deps.clock.now()
    const lease = { owner: randomUUID(), until: new Date(now.getTime() + deps.leaseMs) }
    const row = await rotate(lease, now)
    if (row !== null) {
      try {
        return await send(row)
      } finally {
        await releaseSendLease(deps.db, row.id, lease.owner).catch((e: Error) => { deps.log.warn({ invitationId: row.id, err: e.message }, 'could not release the send lease; it runs out by itself') })
      }
    }
    if (performance.now() >= giveUpAt) {
      const err = serviceError('SERVICE_UNAVAILABLE', ['another send of this invitation is still in progress; retry shortly'])
      err.headers = { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) }
      throw err
    }
    await sleep(POLL_MS[Math.min(attempt, POLL_MS.length - 1)])
  }
}
