import type { Ports } from '../ports/index.js'
import type { JobDefinition } from '../ports/job-engine.js'
import { expireInvitations } from './expiry.js'
import { queueDueReminders, sendReminder } from './reminders.js'
import type { InvitationService } from './service.js'

/** The invitations' jobs: the expiry and reminder sweeps (each minute), reminder e-mails, batch chunks. */
export function invitationJobs (ports: Ports, invitations: InvitationService): JobDefinition[] {
  return [
    { queue: 'invitation-expiry', cron: '* * * * *', run: async () => { await expireInvitations(ports) } },
    // Reminders: the sweep claims the due ones each minute; each e-mail is a job of its own.
    { queue: 'invitation-reminders', cron: '* * * * *', run: async () => { await queueDueReminders(ports) } },
    { queue: 'invitation-reminder', run: async data => { await sendReminder(ports, data) } },
    {
      queue: 'invitation-batch',
      // Chunks of a batch in flight at once: enough that the SMTP pool always has e-mails waiting
      // while other chunks are fetched, claimed and recorded (a few statements each, slow on a busy
      // machine) — one per four SMTP connections, at least two, at most eight.
      workers: Math.min(8, Math.max(2, Math.ceil(ports.config.smtp.poolConnections / 4))),
      run: async data => { await invitations.deliverBatchChunk(data) }
    },
    { queue: 'invitation-batch-abandoned', run: async data => { await invitations.abandonBatchChunk(data) } }
  ]
}
