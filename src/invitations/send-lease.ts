import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import {
  releaseSendLease, releaseSendLeases, renewSendLease, renewSendLeases, type SendLease
} from '../db/invitations.js'
import { serviceError } from '../errors.js'

// Rotating an invitation's token and sending the e-mail that carries it are one ordered step,
// guarded by a send lease on the invitation row (migration 004). The statement that rotates the
// token takes the lease itself, so two requests (in one process or in several, on PostgreSQL or
// PGlite alike: no advisory locks) never rotate one invitation while the other's e-mail is on
// its way; the newest e-mail therefore always carries the working link. A request that finds the
// lease held waits for it (polling, bounded), then rotates and sends in its turn.

/** Seconds a client is told to wait when the lease stayed busy for the whole wait. */
const BUSY_RETRY_AFTER_SECONDS = 5
// Waiters in this process are woken when a lease here is released; polling (rarely: each poll
// is a transaction) covers leases held by other instances or left by a dead one.
const POLL_MS = [50, 100, 200, 400, 1000]

export interface SendLeaseDeps {
  db: Database
  clock: Clock
  log: Logger
  /** How long the lease holds without renewal (IDEMPOTENCY_LEASE_MS); renewed every third of it. */
  leaseMs: number
  /** How long a request waits for another's send: the longest delivery, plus margin. */
  waitMs: number
}

/**
 * `rotate` rotates the token and takes the lease in its statement (null: another owner holds
 * it); `send` delivers with the new token while the lease is held. The lease is released after
 * the send, whatever its outcome; the owner renews it while it sends, so it runs out by itself
 * within `leaseMs` if this process dies (kill -9), not after the whole send deadline.
 */
export type UnderSendLease = <Row extends { id: string }, R>(
  rotate: (lease: SendLease, now: Date) => Promise<Row | null>,
  send: (row: Row) => Promise<R>
) => Promise<R>

/**
 * The leases of many invitations under one owner (a chunk of a batch): `claim` takes those it can
 * in one statement and answers their rows (no waiting: a row it could not take is the caller's,
 * through the one-row path); `send` delivers them. They are renewed together while it runs and
 * given back together after, whatever its outcome (one statement each).
 */
export type UnderSendLeases = <Row extends { id: string }, R>(
  claim: (lease: SendLease, now: Date) => Promise<Row[]>,
  send: (rows: Row[], lease: SendLease) => Promise<R>
) => Promise<R>

export function createSendLeases (
  deps: SendLeaseDeps
): { underSendLease: UnderSendLease, underSendLeases: UnderSendLeases } {
  let sleepers: Array<() => void> = []
  const wakeAll = (): void => { for (const w of sleepers.splice(0)) w() }
  const nap = async (ms: number): Promise<void> => {
    await new Promise<void>(resolve => {
      const timer = setTimeout(done, ms)
      function done (): void { clearTimeout(timer); sleepers = sleepers.filter(w => w !== done); resolve() }
      sleepers.push(done)
    })
  }
  return {
    underSendLease: async (rotate, send) => await underSendLease(deps, rotate, send, wakeAll, nap),
    underSendLeases: async (claim, send) => await underSendLeases(deps, claim, send, wakeAll)
  }
}

async function underSendLeases<Row extends { id: string }, R> (
  deps: SendLeaseDeps,
  claim: (lease: SendLease, now: Date) => Promise<Row[]>,
  send: (rows: Row[], lease: SendLease) => Promise<R>,
  released: () => void
): Promise<R> {
  const now = deps.clock.now()
  const lease = { owner: randomUUID(), until: new Date(now.getTime() + deps.leaseMs) }
  const rows = await claim(lease, now)
  if (rows.length === 0) return await send(rows, lease)
  const ids = rows.map(r => r.id)
  const renew = setInterval(() => {
    const until = new Date(deps.clock.now().getTime() + deps.leaseMs)
    renewSendLeases(deps.db, ids, lease.owner, until).catch((e: Error) => {
      deps.log.warn({ invitations: ids.length, err: e.message }, 'could not renew the send leases')
    })
  }, Math.max(1, Math.floor(deps.leaseMs / 3)))
  renew.unref()
  try {
    return await send(rows, lease)
  } finally {
    clearInterval(renew)
    await releaseSendLeases(deps.db, ids, lease.owner).catch((e: Error) => {
      const msg = 'could not release the send leases; they run out by themselves'
      deps.log.warn({ invitations: ids.length, err: e.message }, msg)
    })
    released()
  }
}

async function underSendLease<Row extends { id: string }, R> (
  deps: SendLeaseDeps,
  rotate: (lease: SendLease, now: Date) => Promise<Row | null>,
  send: (row: Row) => Promise<R>,
  released: () => void,
  nap: (ms: number) => Promise<void>
): Promise<R> {
  // The wait is bounded in real time (a fake clock in tests does not move by itself).
  const giveUpAt = performance.now() + deps.waitMs
  for (let attempt = 0; ; attempt++) {
    const now = deps.clock.now()
    const lease = { owner: randomUUID(), until: new Date(now.getTime() + deps.leaseMs) }
    const row = await rotate(lease, now)
    if (row !== null) {
      const renew = setInterval(() => {
        renewSendLease(
          deps.db, row.id, lease.owner, new Date(deps.clock.now().getTime() + deps.leaseMs)
        ).catch((e: Error) => {
          deps.log.warn(
            { invitationId: row.id, err: e.message }, 'could not renew the send lease'
          )
        })
      }, Math.max(1, Math.floor(deps.leaseMs / 3)))
      renew.unref()
      try {
        return await send(row)
      } finally {
        clearInterval(renew)
        await releaseSendLease(
          deps.db, row.id, lease.owner
        ).catch((e: Error) => {
          deps.log.warn(
            { invitationId: row.id, err: e.message }, 'could not release the send lease; it runs out by itself'
          )
        })
        released()
      }
    }
    if (performance.now() >= giveUpAt) {
      const err = serviceError(
        'SERVICE_UNAVAILABLE', ['another send of this invitation is still in progress; retry shortly']
      )
      err.headers = { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) }
      throw err
    }
    await nap(POLL_MS[Math.min(attempt, POLL_MS.length - 1)] as number)
  }
}
