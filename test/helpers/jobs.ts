import type { JobQueue } from '../../src/ports/job-engine.js'
import type { TestApp } from './build.js'
import { until } from './service-process.js'

/**
 * Resolves once the job engine has nothing left to do in `queues`: no job of theirs running and
 * none waiting that falls due within `horizonMs` (a retry's backoff, a webhook's next attempt).
 * What a test awaits before it counts what was sent, and that nothing more was: a job neither
 * running nor about to run sends nothing. Jobs due later (an expiry days away) do not count.
 */
export async function jobsSettled (
  app: Pick<TestApp, 'db' | 'config'>, queues: readonly JobQueue[], horizonMs = 10_000, ms = 60_000
): Promise<void> {
  const table = `"${app.config.jobs.schema}".job`
  await until(`no job of ${queues.join(', ')} running or due`, async () => {
    const r = await app.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} WHERE name = ANY($1::text[]) AND (state = 'active'
         OR (state IN ('created', 'retry') AND start_after < now() + $2::int * interval '1 millisecond'))`,
      [[...queues], horizonMs]
    )
    return r.rows[0]?.n === 0 || undefined
  }, ms)
}
