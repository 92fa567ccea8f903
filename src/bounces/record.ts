import type { Ports } from '../ports.js'
import { systemActor } from '../audit/actor.js'
import { markInvitationBounced, recordDeliveryDelay } from '../db/invitations.js'
import { tellInviter } from '../invitations/inviter-notice.js'

// What a reported delivery failure does to an invitation, whichever intake reported it (a DSN to
// the signed return path, a provider's signed webhook). Permanent (5.x.x, a hard bounce): the
// invitation is `bounced` with the reason, `invitation.bounced` is recorded in the same
// transaction (audit trail, feed, webhooks), and the inviter hears it in Slack. Temporary (4.x.x):
// the reason becomes the invitation's last delivery error, audited, and nothing else: the relay
// retries, and a later report says how that ended.

export type BounceDeps = Pick<Ports, 'db' | 'clock' | 'log' | 'events' | 'inviterNotices'>

export interface DeliveryReport {
  invitationId: string
  permanent: boolean
  /** The status and the remote server's diagnostic, as reported. */
  reason: string
  /** The intake, named in the audit trail as the system actor. */
  via: 'delivery status notification' | 'e-mail provider (Resend)'
}

export type ReportOutcome = 'bounced' | 'recorded' | 'ignored'

const REASON_MAX = 500

/** One line of printable text, bounded: the reason is shown in the console and in Slack. */
function reasonText (s: string): string {
  // eslint-disable-next-line no-control-regex
  const line = s.replace(/[\x00-\x1F\x7F]+/g, ' ').replace(/\s+/g, ' ').trim()
  return (line === '' ? 'no reason given' : line).slice(0, REASON_MAX)
}

/** Apply one report; `ignored` when the invitation is not (or no longer) one whose e-mail can fail. */
export async function recordDeliveryReport (deps: BounceDeps, report: DeliveryReport): Promise<ReportOutcome> {
  const reason = reasonText(report.reason)
  const now = deps.clock.now()
  const actor = systemActor(report.via)
  const changed = await deps.db.transaction(async tx => {
    const row = report.permanent
      ? await markInvitationBounced(tx, report.invitationId, reason, now)
      : await recordDeliveryDelay(tx, report.invitationId, reason, now)
    if (row === null) return null
    await deps.events.record(tx, {
      workspaceId: row.workspaceId,
      action: report.permanent ? 'invitation.bounced' : 'invitation.delivery_delayed',
      actor,
      target: { type: 'invitation', id: row.id },
      payload: report.permanent
        ? { email: row.email, deliveryStatus: 'bounced', reason }
        : { email: row.email, reason },
      now
    })
    return row
  })
  if (changed === null) {
    deps.log.info({ invitationId: report.invitationId, via: report.via }, 'bounce: no invitation to mark (ignored)')
    return 'ignored'
  }
  deps.log.info(
    { invitationId: changed.id, permanent: report.permanent, via: report.via },
    report.permanent ? 'bounce: invitation marked bounced' : 'bounce: temporary failure recorded'
  )
  if (report.permanent) {
    tellInviter(deps, {
      kind: 'bounced',
      workspaceId: changed.workspaceId,
      invitationId: changed.id,
      inviterId: changed.invitedBy,
      email: changed.email,
      reason
    })
  }
  return report.permanent ? 'bounced' : 'recorded'
}
