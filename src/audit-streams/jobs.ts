import type { JobDefinition } from '../ports/job-engine.js'
import { createStreamDelivery, type StreamDeliveryDeps } from './delivery.js'
import { sendPausedNotice, type PausedNoticeDeps } from './paused-notice.js'

/**
 * Audit streams' jobs: each stream's delivery chain (a few streams delivered at once per
 * process), a sweep each minute restarting a chain whose jobs ran out, and each admin's e-mail
 * when a stream is paused after a day of failures.
 */
export function auditStreamJobs (deps: StreamDeliveryDeps & PausedNoticeDeps): JobDefinition[] {
  const delivery = createStreamDelivery(deps)
  return [
    { queue: 'audit-stream-delivery', workers: 4, run: async data => { await delivery.run(data) } },
    { queue: 'audit-stream-sweep', cron: '* * * * *', run: async () => { await delivery.sweep() } },
    { queue: 'audit-stream-notice', run: async data => { await sendPausedNotice(deps, data) } }
  ]
}
