import { randomUUID } from 'node:crypto'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import { releaseSendLeases, renewSendLeases, type SendLease } from '../db/invitations.js'
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
 * The lease on the rows a statement took. Its owner renews it while it sends, so it runs out by
 * itself within `leaseMs` if this process dies (kill -9), not after the whole send deadline;
 * `release` gives it back (once) and is meant for a `finally`, whatever the send's outcome.
 */
interface HeldLease {
  readonly owner: string
  renew: () => Promise<void>
  release: () => Promise<void>
}

/**
 * What one statement that takes an invitation's lease answered: the row (the lease now on it),
 * 'busy' (another owner holds it: wait and try again), or what the invitation moved to instead
 * (no lease taken; its words are the caller's, given as a type argument: never inferred).
 */
type TakeLease<Row, Moved extends string> =
  (lease: SendLease, now: Date) => Promise<Row | 'busy' | NoInfer<Moved>>

/** One invitation's lease, held with its row, or what the invitation moved to. */
export type Acquired<Row, Moved extends string> = { row: Row, lease: HeldLease } | { moved: Moved }

export interface SendLeases {
  /**
   * One invitation's lease, waited for: `take` is run again with a fresh lease while it answers
   * 'busy', until the wait (waitMs) runs out: then SERVICE_UNAVAILABLE with Retry-After.
   */
  acquire: <Row extends { id: string }, Moved extends string = never>(
    take: TakeLease<Row, Moved>
  ) => Promise<Acquired<Row, Moved>>
  /**
   * Many invitations' leases under one owner (a chunk of a batch), taken by `claim` in one
   * statement without waiting: a row it could not take is the caller's, through `acquire`.
   */
  acquireMany: <Row extends { id: string }>(
    claim: (lease: SendLease, now: Date) => Promise<Row[]>
  ) => Promise<{ rows: Row[], lease: HeldLease }>
}

export function createSendLeases (deps: SendLeaseDeps): SendLeases {
  const waiters = createWaiters()
  const hold = (ids: string[], owner: string): HeldLease => holdLease(deps, ids, owner, waiters.wakeAll)
  return {
    async acquire (take) {
      // The wait is bounded in real time (a fake clock in tests does not move by itself).
      const giveUpAt = performance.now() + deps.waitMs
      for (let attempt = 0; ; attempt++) {
        const { lease, now } = freshLease(deps)
        const got = await take(lease, now)
        if (typeof got === 'object') return { row: got, lease: hold([got.id], lease.owner) }
        if (got !== 'busy') return { moved: got }
        if (performance.now() >= giveUpAt) throw stillBusy()
        await waiters.nap(POLL_MS[Math.min(attempt, POLL_MS.length - 1)] as number)
      }
    },
    async acquireMany (claim) {
      const { lease, now } = freshLease(deps)
      const rows = await claim(lease, now)
      return { rows, lease: hold(rows.map(r => r.id), lease.owner) }
    }
  }
}

function freshLease (deps: SendLeaseDeps): { lease: SendLease, now: Date } {
  const now = deps.clock.now()
  return { lease: { owner: randomUUID(), until: new Date(now.getTime() + deps.leaseMs) }, now }
}

function stillBusy (): Error {
  const err = serviceError(
    'SERVICE_UNAVAILABLE', ['another send of this invitation is still in progress; retry shortly']
  )
  err.headers = { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) }
  return err
}

/** The one renew/release of a lease, for one invitation or a chunk's (one statement each). */
function holdLease (deps: SendLeaseDeps, ids: string[], owner: string, released: () => void): HeldLease {
  let held = ids.length > 0
  // A failed renewal or release only logs: the lease then runs out by itself.
  const warn = (what: string) => (e: Error): void => {
    deps.log.warn({ invitationId: ids[0], invitations: ids.length, err: e.message }, what)
  }
  const renew = async (): Promise<void> => {
    if (!held) return
    const until = new Date(deps.clock.now().getTime() + deps.leaseMs)
    await renewSendLeases(deps.db, ids, owner, until).catch(warn('could not renew the send lease'))
  }
  const timer = held ? setInterval(() => { renew().catch(() => {}) }, Math.max(1, Math.floor(deps.leaseMs / 3))) : null
  timer?.unref()
  return {
    owner,
    renew,
    async release () {
      if (!held) return
      held = false
      if (timer !== null) clearInterval(timer)
      const givenBack = releaseSendLeases(deps.db, ids, owner)
      await givenBack.catch(warn('could not release the send lease; it runs out by itself'))
      released()
    }
  }
}

/** Sleepers of this process, woken early when a lease here is released. */
function createWaiters (): { nap: (ms: number) => Promise<void>, wakeAll: () => void } {
  let sleepers: Array<() => void> = []
  return {
    wakeAll: () => { for (const w of sleepers.splice(0)) w() },
    nap: async ms => {
      await new Promise<void>(resolve => {
        const timer = setTimeout(done, ms)
        function done (): void { clearTimeout(timer); sleepers = sleepers.filter(w => w !== done); resolve() }
        sleepers.push(done)
      })
    }
  }
}
