import type { Queryable } from '../db/client.js'

// A port: the durable job queue; src/jobs/engine.ts implements it (pg-boss on the Database port).

export type JobQueue = 'webhook-delivery' | 'invitation-expiry' | 'invitation-reminders' | 'invitation-reminder'
  | 'domain-verification' | 'invitation-batch' | 'invitation-batch-abandoned' | 'admin-notice' | 'admin-notice-digests'
  | 'sso-certificates' | 'sso-certificate-notice'
  | 'audit-stream-delivery' | 'audit-stream-sweep' | 'audit-stream-notice'
  | 'audit-digests'

export interface JobEngine {
  /** Queue a job in the caller's transaction, to start after `delayMs` (default: now). */
  send(tx: Queryable, queue: JobQueue, data: object, opts?: { delayMs?: number }): Promise<void>
  /** Queue many jobs, due now, in the caller's transaction: one statement (and one NOTIFY). */
  sendMany(tx: Queryable, queue: JobQueue, data: object[]): Promise<void>
  /**
   * Run `handler` for each job of `queue` (one at a time per worker; `workers` of them in this
   * process, default one); a throw retries the job.
   */
  work(queue: JobQueue, handler: (data: unknown) => Promise<void>, opts?: { workers?: number }): Promise<void>
  /** Queue a job on a cron schedule (UTC); pg-boss runs each slot once across instances. */
  schedule(queue: JobQueue, cron: string): Promise<void>
  /** Look for work now instead of at the next poll (after a commit that queued jobs). */
  wake(queue: JobQueue): void
  stop(): Promise<void>
}

/**
 * A kind of job, declared by the feature that does it: its queue, what runs each job, how many run
 * at once in one process (default one), and, for a sweep, its cron schedule (UTC).
 */
export interface JobDefinition {
  readonly queue: JobQueue
  readonly run: (data: unknown) => Promise<void>
  readonly workers?: number
  readonly cron?: string
}
