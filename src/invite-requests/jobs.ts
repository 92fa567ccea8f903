import type { JobDefinition } from '../ports/job-engine.js'
import type { InviteRequestService } from './service.js'

/** Admins hear of invite requests at most once an hour: the digests are swept each minute, each notice a job. */
export function inviteRequestJobs (inviteRequests: InviteRequestService): JobDefinition[] {
  return [
    { queue: 'admin-notice', run: async data => { await inviteRequests.sendNotice(data) } },
    { queue: 'admin-notice-digests', cron: '* * * * *', run: async () => { await inviteRequests.queueDueDigests() } }
  ]
}
