import { randomUUID } from 'node:crypto'
import type { Queryable } from '../db/client.js'
import {
  findAuditStreamById, listRecordsAfter, recordStreamDelivered, recordStreamFailure, recordStreamPolled,
  restartStaleStreams, setAuditStreamPaused, type AuditStreamRow
} from '../db/audit-streams.js'
import { systemActor } from '../audit/actor.js'
import type { AttemptOutcome } from '../webhooks/sender.js'
import { toCloudEvent } from './envelope.js'
import { sendToStream, succeeded } from './send.js'
import { queuePausedNotices } from './paused-notice.js'
import { auditStream, startChain, type AuditStreamDeps } from './context.js'
import type { Ports } from '../ports/index.js'

// A stream's delivery is a chain of jobs, one at a time per stream (each job queues the next in
// the transaction that records its outcome), each carrying the token the stream holds for that
// step (src/db/audit-streams.ts): a job whose token the stream no longer holds (a paused or
// resumed stream, a chain the sweep restarted, a copy of a step already done) ends there.
// Each job reads up to 500 records after the cursor (the chain place of the last record the
// receiver acknowledged: audit_events.chain_seq, one gap-free order per workspace), in order,
// sends them as one batch outside any transaction, and then in one transaction either moves the
// cursor (2xx) or records the failure and when to try again. A crash between
// the POST and that write sends the same batch again (pg-boss retries the job once it expires):
// at least once, each record with its own id; never out of order, never a record skipped.
// With nothing to send the chain looks again a second later.

interface DeliveryJob { streamId: string, runToken: string }

export type StreamDeliveryDeps = AuditStreamDeps & Pick<Ports, 'log'>

const BATCH = 500
const IDLE_POLL_MS = 1000
/** A day of failures without a success pauses the stream (the service's clock). */
const PAUSE_AFTER_MS = 86_400_000
/** Retry-After is honoured up to an hour. */
const MAX_RETRY_AFTER_MS = 3_600_000
/** A chain not heard of for this long (its job's retries spent) is restarted by the sweep. */
const STALE_MS = 300_000

function isDeliveryJob (data: unknown): data is DeliveryJob {
  const d = data as Partial<DeliveryJob> | null
  return typeof d?.streamId === 'string' && typeof d.runToken === 'string'
}

/** ±20 % so that streams failed together do not come back together. */
function jittered (ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4))
}

function problemOf (outcome: AttemptOutcome): string {
  return outcome.kind === 'answered' ? `HTTP ${outcome.status}` : outcome.error
}

export function createStreamDelivery (deps: StreamDeliveryDeps): {
  run(data: unknown): Promise<void>
  sweep(): Promise<void>
} {
  const { db, clock, jobs } = deps
  const delays = deps.config.webhooks.retryDelaysMs

  async function next (tx: Queryable, job: DeliveryJob, delayMs: number): Promise<void> {
    await jobs.send(tx, 'audit-stream-delivery', job satisfies DeliveryJob, { delayMs })
    if (delayMs === 0) tx.afterCommit?.(() => { jobs.wake('audit-stream-delivery') })
  }

  async function pauseFailing (tx: Queryable, s: AuditStreamRow, outcome: AttemptOutcome, now: Date): Promise<void> {
    if (!await setAuditStreamPaused(tx, s.id, { pausedReason: 'failing', runToken: null, now })) return
    await auditStream(deps, tx, {
      workspaceId: s.workspaceId,
      action: 'audit_stream.paused',
      actor: systemActor('audit stream delivery'),
      streamId: s.id,
      payload: {
        reason: 'failing', failingSince: (s.failingSince ?? now).toISOString(), lastProblem: problemOf(outcome)
      },
      now
    })
    await queuePausedNotices(deps, tx, s.workspaceId, s.id)
    deps.log.warn({ streamId: s.id }, 'audit stream paused after a day of failures')
  }

  async function recordOutcome (
    job: DeliveryJob, s: AuditStreamRow, last: { chainSeq: number, createdAt: Date }, outcome: AttemptOutcome
  ): Promise<void> {
    const token = { runToken: job.runToken, nextToken: randomUUID() }
    const following: DeliveryJob = { streamId: s.id, runToken: token.nextToken }
    await db.transaction(async tx => {
      const now = clock.now()
      if (succeeded(outcome)) {
        const statusCode = outcome.kind === 'answered' ? outcome.status : 0
        const delivered = { cursorSeq: last.chainSeq, recordAt: last.createdAt, statusCode, now }
        if (await recordStreamDelivered(tx, s.id, token, delivered)) {
          await next(tx, following, 0)
        }
        return
      }
      const current = await findAuditStreamById(tx, s.id, { forUpdate: true })
      if (current === null || current.runToken !== job.runToken || current.status !== 'active') return
      const failingSince = current.failingSince ?? now
      if (now.getTime() - failingSince.getTime() >= PAUSE_AFTER_MS) {
        await pauseFailing(tx, current, outcome, now)
        return
      }
      const wait = delays[Math.min(current.failures, delays.length - 1)] ?? IDLE_POLL_MS
      const retryAfter = outcome.kind === 'answered' ? outcome.retryAfterMs : null
      const delayMs = Math.max(jittered(wait), Math.min(retryAfter ?? 0, MAX_RETRY_AFTER_MS))
      const recorded = await recordStreamFailure(tx, s.id, token, {
        statusCode: outcome.kind === 'answered' ? outcome.status : null,
        error: outcome.kind === 'failed' ? outcome.error : null,
        nextAttemptAt: new Date(now.getTime() + delayMs),
        now
      })
      if (recorded) await next(tx, following, delayMs)
    })
  }

  return {
    async run (data) {
      if (!isDeliveryJob(data)) return
      const s = await findAuditStreamById(db, data.streamId)
      if (s === null || s.status !== 'active' || s.runToken !== data.runToken) return
      const records = await listRecordsAfter(db, s.workspaceId, s.cursorSeq, BATCH)
      const last = records[records.length - 1]
      if (last === undefined) {
        const token = { runToken: data.runToken, nextToken: randomUUID() }
        await db.transaction(async tx => {
          if (await recordStreamPolled(tx, s.id, token, clock.now())) {
            await next(tx, { streamId: s.id, runToken: token.nextToken }, IDLE_POLL_MS)
          }
        })
        return
      }
      const outcome = await sendToStream(deps, s, records.map(r => toCloudEvent(deps.config.appUrl, r)))
      await recordOutcome(data, s, last, outcome)
    },

    async sweep () {
      const now = clock.now()
      await db.transaction(async tx => {
        const restarted = await restartStaleStreams(tx, new Date(now.getTime() - STALE_MS), now)
        for (const s of restarted) await startChain(deps, tx, s.id, s.runToken)
        if (restarted.length > 0) deps.log.info({ restarted: restarted.length }, 'audit stream chains restarted')
      })
    }
  }
}
