import type { Ports } from '../ports/index.js'
import type { Database } from '../db/client.js'
import type { Clock } from '../clock.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import type { JobEngine } from '../ports/job-engine.js'
import { claimDueReminders, effectiveStatus, findReminder } from '../db/invitations.js'
import { systemActor } from '../audit/actor.js'
import { invitationEmail, signupLink } from './email.js'
import { openToken } from './link-seal.js'
import { readerFor } from '../emails/reader.js'

// Reminders (issue 29): a workspace setting (off, or N days before expiry, 1–7, default 2). A
// scheduled sweep (every minute, one instance per slot) claims each pending invitation that is
// due, once: `reminded_at` is set by an UPDATE … WHERE reminded_at IS NULL, so of any number of
// sweeps (instances, retries) one claims it; the same transaction records
// `invitation.reminder_sent` and queues the job that sends the e-mail. The job survives restarts
// (a row in the job engine) and is retried while the relay refuses; it sends nothing once the
// invitation stopped being pending (accepted, revoked or expired since the claim).

const BATCH = 200
const ACTOR = systemActor('invitation reminder')

/** Claims every due reminder, in batches, and queues their e-mails; returns how many. */
export async function queueDueReminders (
  deps: { db: Database, clock: Clock, events: EventOutbox, jobs: JobEngine }
): Promise<number> {
  let total = 0
  for (;;) {
    const n = await deps.db.transaction(async tx => {
      const now = deps.clock.now()
      const due = await claimDueReminders(tx, now, BATCH)
      for (const inv of due) {
        await deps.events.record(tx, {
          workspaceId: inv.workspaceId,
          action: 'invitation.reminder_sent',
          actor: ACTOR,
          target: { type: 'invitation', id: inv.id },
          payload: { email: inv.email, role: inv.role },
          now
        })
        await deps.jobs.send(tx, 'invitation-reminder', { invitationId: inv.id })
      }
      const wake = (): void => { deps.jobs.wake('invitation-reminder') }
      if (due.length > 0 && tx.afterCommit !== undefined) tx.afterCommit(wake)
      return due.length
    })
    total += n
    if (n < BATCH) return total
  }
}

/** The job: e-mail one claimed reminder with the invitation's current link. A throw retries it. */
export async function sendReminder (
  deps: Pick<Ports, 'db' | 'clock' | 'config' | 'mailer' | 'log'>,
  data: unknown
): Promise<void> {
  const invitationId = (data as { invitationId?: unknown } | null)?.invitationId
  if (typeof invitationId !== 'string') return
  const r = await findReminder(deps.db, invitationId)
  if (r === null || effectiveStatus(r, deps.clock.now()) !== 'pending') {
    deps.log.info({ invitationId }, 'reminder not sent: the invitation is no longer pending')
    return
  }
  const token = r.linkSealed !== null ? openToken(deps.config, r, r.linkSealed) : null
  if (token === null) {
    // Re-sent since (a fresh e-mail, fresh link) and that send failed or is under way.
    deps.log.info({ invitationId }, 'reminder not sent: the link it would carry was rotated since')
    return
  }
  // In the language the invitation was made in (a reminder never switches to another).
  const reader = await readerFor(deps.db, deps.config, r.workspaceId, r.locale)
  await deps.mailer.send(invitationEmail(reader, {
    to: r.email,
    inviter: r.inviterName,
    role: r.role,
    link: signupLink(deps.config.appUrl, token),
    expiresAt: r.expiresAt,
    reminder: true
  }))
}
