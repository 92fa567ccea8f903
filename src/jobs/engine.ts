import PgBoss from 'pg-boss'
import type { Database, Queryable } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { JobDefinition, JobEngine, JobQueue } from '../ports/job-engine.js'

// The job engine: pg-boss 10 (the last major that runs on Node 20) on the service's own Database
// port, so it works on a PostgreSQL server and on the embedded PGlite alike. Jobs live in their
// own schema; a worker takes a job with SELECT … FOR UPDATE SKIP LOCKED, so several instances on
// one database run each job once, and a job whose worker died (kill -9) is retried when its
// expiry passes. Jobs are queued in the caller's transaction: one exists iff the change commits.
// On PostgreSQL a job due now also sends NOTIFY in that transaction, which the server delivers at
// commit to every instance LISTENing (see startJobEngine): whichever is free takes it at once,
// not at its next poll. PGlite is one process: the committing instance's wake() is enough there.

export interface JobEngineOptions {
  db: Database
  log: Logger
  /** PostgreSQL schema of pg-boss's tables. */
  schema: string
  pollSeconds: number
  /** How long a job may run before it is taken as dead and retried; also pg-boss's maintenance pace. */
  expireSeconds: number
  maintenanceSeconds: number
  /** false: queue jobs but run none (create-admin and other scripts). */
  workers: boolean
}

// pg-boss sends its schema and maintenance scripts as one text of several statements; PGlite's
// query() takes one statement (extended protocol), its exec() several. pg's simple protocol takes
// both, so on PostgreSQL the first branch always answers.
const MULTI_STATEMENT = /cannot insert multiple commands into a prepared statement/

/** More than one statement: a `;` followed by more SQL. */
const SCRIPT = /;\s*\S/

function executorOf (q: Queryable, stopping: () => boolean = () => false): PgBoss.Db {
  return {
    async executeSql (text, values) {
      // pg-boss sends its schema scripts (several statements, no parameters) through the same call
      // as its queries; PGlite's query() takes one statement, so a script goes to exec() at once
      // rather than failing first (a failed statement is counted and traced as one).
      const noValues = values === undefined || values.length === 0
      if (noValues && SCRIPT.test(text)) {
        await q.exec(text)
        return { rows: [] }
      }
      try {
        const r = await q.query(text, values)
        return { rows: Array.isArray(r.rows) ? r.rows : [] }
      } catch (err) {
        // pg-boss records a job's completion without awaiting it; once stopping (the database may
        // close first), a failure there would be an unhandled rejection. An answer without rows
        // reads as "nothing affected": the job stays active and is retried after its expiry
        // (at-least-once, as after a crash).
        if (stopping()) return {} as unknown as { rows: unknown[] }
        if (values !== undefined && values.length > 0) throw err
        if (!MULTI_STATEMENT.test((err as Error).message)) throw err
        await q.exec(text)
        return { rows: [] }
      }
    }
  }
}

// A queue's dead letter is made before it (pg-boss refers to it by a foreign key).
const QUEUES: readonly JobQueue[] = [
  'webhook-delivery', 'invitation-expiry', 'invitation-reminders', 'invitation-reminder', 'domain-verification',
  'invitation-batch-abandoned', 'invitation-batch', 'admin-notice', 'admin-notice-digests', 'sso-certificates',
  'sso-certificate-notice', 'audit-stream-delivery', 'audit-stream-sweep', 'audit-stream-notice', 'audit-digests'
]

/**
 * Where a job goes once its retries are spent: pg-boss queues a copy of it there (its data, a job
 * of its own). A batch's chunk that failed RETRY_LIMIT + 1 times (a crash each time, a database
 * down for the hours its backoff spans) would otherwise leave its rows queued, and its batch
 * processing, for good: nobody told, nothing sent. The dead letter's job settles them.
 */
const DEAD_LETTERS: Partial<Record<JobQueue, JobQueue>> = { 'invitation-batch': 'invitation-batch-abandoned' }

/** Attempts after the first, with exponential backoff from 1 s (pg-boss caps each wait at 2^16 s). */
const RETRY_LIMIT = 20

const isQueue = (s: string): s is JobQueue => (QUEUES as readonly string[]).includes(s)

/** The NOTIFY channel of one job schema: instances on one database share it, tests' schemas do not. */
const jobChannel = (schema: string): string => `jobs:${schema}`

/**
 * pg-boss's tables and functions, without queues (their options come from the configuration):
 * what startJobEngine installs on a new database first. Tests install it once in the database
 * template every test database is copied from; startJobEngine then finds it current.
 */
export async function installJobSchema (db: Database, schema: string): Promise<void> {
  const boss = new PgBoss({ db: executorOf(db), schema, supervise: false, schedule: false, migrate: true })
  await boss.start()
  await boss.stop({ graceful: false, wait: true, close: false })
}

export async function startJobEngine (opts: JobEngineOptions): Promise<JobEngine> {
  let stopping = false
  const boss = new PgBoss({
    db: executorOf(opts.db, () => stopping),
    schema: opts.schema,
    supervise: opts.workers,
    schedule: opts.workers,
    migrate: true,
    maintenanceIntervalSeconds: opts.maintenanceSeconds,
    monitorStateIntervalSeconds: Math.max(opts.maintenanceSeconds, 60)
  })
  boss.on('error', err => { opts.log.warn({ err: err.message }, 'job engine error (it retries by itself)') })
  await boss.start()
  for (const name of QUEUES) {
    // Crash recovery is pg-boss's: a job whose worker vanished is retried after expireInSeconds.
    // Failures a handler sees (a peer answering 500) are its own business (webhooks reschedule).
    const deadLetter = DEAD_LETTERS[name]
    const options = {
      expireInSeconds: opts.expireSeconds,
      retryLimit: RETRY_LIMIT,
      retryDelay: 1,
      retryBackoff: true,
      ...(deadLetter !== undefined ? { deadLetter } : {})
    }
    // createQueue leaves a queue that exists as it was made: updateQueue brings a database made
    // by an earlier version, or with other settings (the expiry follows WEBHOOK_TIMEOUT_MS and
    // SMTP_TIMEOUT_MS), to these. Jobs take them when queued.
    await boss.createQueue(name, { name, ...options })
    await boss.updateQueue(name, { name, ...options })
  }
  const workers = new Map<JobQueue, string[]>()
  const wake = (queue: JobQueue): void => {
    for (const id of workers.get(queue) ?? []) boss.notifyWorker(id)
  }
  const channel = jobChannel(opts.schema)
  const listener = opts.workers && opts.db.listen !== undefined
    ? await opts.db.listen(
      channel,
      payload => { if (isQueue(payload)) wake(payload) },
      // Notifications sent while the connection was down are lost: look once, as if told.
      () => { for (const q of QUEUES) wake(q) }
    )
    : null
  return {
    async send (tx, queue, data, o = {}) {
      const delay = o.delayMs ?? 0
      await boss.send(queue, data, {
        db: executorOf(tx),
        ...(delay > 0 ? { startAfter: delay / 1000 } : {})
      })
      // Delivered when the transaction commits (never on rollback), to every listening instance.
      if (delay === 0 && opts.db.kind === 'postgres') await tx.query('SELECT pg_notify($1, $2)', [channel, queue])
    },
    async sendMany (tx, queue, data) {
      if (data.length === 0) return
      // pg-boss's insert: one INSERT … SELECT over the jobs as JSON, with the queue's own options.
      await boss.insert(data.map(d => ({ name: queue, data: d })), { db: executorOf(tx) })
      if (opts.db.kind === 'postgres') await tx.query('SELECT pg_notify($1, $2)', [channel, queue])
    },
    async work (queue, handler, o = {}) {
      if (!opts.workers) return
      const ids: string[] = []
      for (let i = 0; i < (o.workers ?? 1); i++) {
        let id = ''
        id = await boss.work(queue, { pollingIntervalSeconds: opts.pollSeconds, batchSize: 1 }, async jobs => {
          try {
            for (const job of jobs) await handler(job.data)
          } finally {
            // A worker that just had a job looks for the next at once: pg-boss waits out the poll
            // interval after every fetch, found or not, so a queue of twenty jobs took twenty polls
            // per worker (a batch's chunks: 50 e-mails per worker per 2 s). An empty fetch still waits.
            boss.notifyWorker(id)
          }
        })
        ids.push(id)
      }
      workers.set(queue, ids)
    },
    async schedule (queue, cron) {
      if (opts.workers) await boss.schedule(queue, cron, {}, { tz: 'UTC' })
    },
    wake,
    async stop () {
      stopping = true
      await listener?.close()
      // Not graceful: a delivery in flight is abandoned and retried after its expiry, which is
      // the same path as a crash (at-least-once); shutdown does not wait for slow peers.
      await boss.stop({ graceful: false, wait: true, close: false })
    }
  }
}

/** Starts the workers of each kind of job, and the schedules of the sweeps among them. */
export async function startJobs (engine: JobEngine, definitions: readonly JobDefinition[]): Promise<void> {
  for (const job of definitions) {
    await engine.work(job.queue, job.run, job.workers !== undefined ? { workers: job.workers } : undefined)
    if (job.cron !== undefined) await engine.schedule(job.queue, job.cron)
  }
}
