import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { deleteFinishedChatEvents } from '../db/chat-events.js'
import { deleteCompletedBatchesBefore } from '../db/invitation-batches.js'
import { deleteIdempotencyKeysBefore } from '../db/idempotency-keys.js'
import { deleteExpiredLoginTokens } from '../db/login-tokens.js'
import { deleteExpiredOAuthStates } from '../db/oauth-states.js'
import { deleteExpiredSsoFlows } from '../db/sso-flows.js'
import { deleteExpiredSsoAssertions } from '../db/sso-assertions.js'
import { deleteEndedSessions } from '../db/sessions.js'
import { refreshStatistics, vacuumDatabase, type AnalyzedPages } from './statistics.js'
import { sweepAuditTrails } from '../audit/retention.js'

// The retention sweep: rows that no longer do anything — login tokens and OAuth states (any
// anonymous client can have them written: they go RETENTION_EXPIRED_TOKEN_MINUTES after they
// expire), ended sessions, Idempotency-Key records past their replay window, finished chat events,
// completed invitation batches (their rows hold every address an admin pasted, invalid ones too) —
// are deleted once they are older than the configured ages; and the audit records older than their
// workspace's auditRetentionDays, each deletion recorded in the trail (src/audit/retention.ts).
// Deletes run in small batches, each its own short statement, so the sweep never holds locks for
// long; several instances sweeping at once only share the work. On the embedded database the sweep
// also does what autovacuum does on PostgreSQL (statistics.ts): it refreshes the planner's
// statistics of the tables that grew, then VACUUMs, so the space of what was deleted is used again.

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
const MINUTE_MS = 60_000
/** Rows per DELETE statement. */
export const RETENTION_BATCH = 500
/** Invitation batches per DELETE statement: each takes up to 1,000 rows with it. */
const BATCHES_PER_DELETE = 5

type RetentionCounts = Record<
  'loginTokens' | 'oauthStates' | 'ssoFlows' | 'ssoAssertions' | 'sessions' | 'idempotencyKeys' | 'chatEvents' |
  'invitationBatches',
  number
>

export interface RetentionSweep {
  /** One pass over every table; resolves with the rows removed per table. */
  sweep(): Promise<RetentionCounts>
  /** Sweeps every RETENTION_SWEEP_MINUTES (0: never) on an unref'd timer. */
  start(): void
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>
}

/** Deletes `limit` at a time until a statement comes back short. */
async function drain (del: (limit: number) => Promise<number>, limit = RETENTION_BATCH): Promise<number> {
  let total = 0
  for (;;) {
    const n = await del(limit)
    total += n
    if (n < limit) return total
  }
}

export function createRetentionSweep (
  deps: Pick<Ports, 'db' | 'clock' | 'log' | 'config'>
): RetentionSweep {
  const { db, clock, log } = deps
  const retention = deps.config.retention
  const q: Queryable = db
  let timer: NodeJS.Timeout | null = null
  let running: Promise<unknown> | null = null
  const analyzedPages: AnalyzedPages = new Map()

  const sweep = async (): Promise<RetentionCounts> => {
    const now = clock.now().getTime()
    const ended = new Date(now - retention.endedDays * DAY_MS)
    const expired = new Date(now - retention.expiredTokenMinutes * MINUTE_MS)
    const counts: RetentionCounts = {
      loginTokens: await drain(async n => await deleteExpiredLoginTokens(q, expired, n)),
      oauthStates: await drain(async n => await deleteExpiredOAuthStates(q, expired, n)),
      ssoFlows: await drain(async n => await deleteExpiredSsoFlows(q, expired, n)),
      // Kept until the assertion could no longer be accepted (NotOnOrAfter + skew): then it goes.
      ssoAssertions: await drain(async n => await deleteExpiredSsoAssertions(q, new Date(now), n)),
      sessions: await drain(async n => await deleteEndedSessions(q, ended, n)),
      idempotencyKeys: await drain(async n => await deleteIdempotencyKeysBefore(
        q, new Date(now - retention.idempotencyHours * HOUR_MS), n
      )),
      chatEvents: await drain(async n => await deleteFinishedChatEvents(
        q, new Date(now - retention.chatEventsDays * DAY_MS), n
      )),
      invitationBatches: await drain(async n => await deleteCompletedBatchesBefore(
        q, new Date(now - retention.batchesDays * DAY_MS), n
      ), BATCHES_PER_DELETE)
    }
    const auditRecords = await sweepAuditTrails(db, new Date(now))
    const removed = Object.values(counts).reduce((a, b) => a + b, auditRecords)
    const report = { removed: { ...counts, auditRecords } }
    log[removed > 0 ? 'info' : 'debug'](report, `retention sweep removed ${removed} rows`)
    if (db.kind === 'pglite') {
      // Statistics first: they are taken on the tables as they grew.
      const analyzed = await refreshStatistics(q, analyzedPages)
      if (analyzed.length > 0) log.info({ analyzed }, `planner statistics refreshed for ${analyzed.length} tables`)
      const vacuumMs = await vacuumDatabase(q)
      log[vacuumMs >= 1000 ? 'info' : 'debug']({ vacuumMs }, `database vacuumed in ${vacuumMs} ms`)
    }
    return counts
  }

  const tick = (): void => {
    if (running !== null) return
    running = sweep()
      .catch((err: unknown) => {
        log.warn(
          { err: (err as Error).message }, 'retention sweep failed; retrying at the next interval'
        )
      })
      .finally(() => { running = null })
  }

  return {
    sweep,
    start () {
      if (retention.sweepMinutes === 0 || timer !== null) return
      timer = setInterval(tick, retention.sweepMinutes * 60_000)
      timer.unref()
    },
    async stop () {
      if (timer !== null) clearInterval(timer)
      timer = null
      await running
    }
  }
}
