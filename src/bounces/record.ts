import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { systemActor } from '../audit/actor.js'
import { lockInvitation, markInvitationBounced, recordDeliveryDelay, type InvitationRow } from '../db/invitations.js'
import { tellInviter } from '../invitations/inviter-notice.js'

// What a reported delivery failure does to an invitation, whichever intake reported it (a DSN to
// the signed return path, a provider's signed webhook). Permanent (5.x.x, a hard bounce): the
// invitation is `bounced` with the reason, `invitation.bounced` is recorded in the same
// transaction (audit trail, feed, webhooks), and the inviter hears it in Slack. Temporary (4.x.x):
// the reason becomes the invitation's last delivery error, audited, and nothing else: the relay
// retries, and a later report says how that ended.
//
// A report applies only to the send it reports. An invitation re-sent since (a fresh link, a new
// e-mail) is not bounced by a report about the e-mail before: such a report is recorded in the
// audit trail (`invitation.bounce_superseded`) and changes nothing. Which send a report is about
// is the time that e-mail was made (its Date header, set from the service's clock when the send
// began; a provider's e-mail creation time), against the time the invitation's last send began
// (last_sent_at), to the second as Date headers have it. A report that says no time applies.

export type BounceDeps = Pick<Ports, 'db' | 'clock' | 'log' | 'events' | 'inviterNotices'>

export interface DeliveryReport {
  invitationId: string
  permanent: boolean
  /** The status and the remote server's diagnostic, as reported. */
  reason: string
  /** When the reported e-mail was made, when the report says; undefined: the last send. */
  sentAt?: Date | undefined
  /** The intake, named in the audit trail as the system actor. */
  via: 'delivery status notification' | 'e-mail provider (Resend)'
}

export type ReportOutcome = 'bounced' | 'recorded' | 'ignored'

/** The reason as kept and shown: the sender's words, bounded (src/bounces: REASON_MAX). */
const REASON_MAX = 200

/**
 * One line of plain printable ASCII, bounded: the reason is the remote sender's words, shown to
 * admins in the console and in Slack. Diagnostic codes are ASCII (RFC 3464); anything else —
 * control characters, bidirectional overrides, look-alike letters — becomes a space.
 */
function reasonText (s: string): string {
  const line = s.replace(/[^\x20-\x7E]+/g, ' ').replace(/\s+/g, ' ').trim()
  return (line === '' ? 'no reason given' : line).slice(0, REASON_MAX)
}

const second = (d: Date): number => Math.floor(d.getTime() / 1000)

/** Whether the report is about an e-mail made before the invitation's last send began. */
function superseded (row: InvitationRow, sentAt: Date | undefined): boolean {
  return sentAt !== undefined && row.lastSentAt !== null && second(sentAt) < second(new Date(row.lastSentAt))
}

/** What applying one report in `tx` did; `row` is the invitation it changed (bounced or recorded). */
export interface Applied { outcome: ReportOutcome, row: InvitationRow | null }

/** Apply one report in the caller's transaction; the inviter is told once it commits (`tellBounced`). */
export async function applyDeliveryReport (
  deps: BounceDeps, tx: Queryable, report: DeliveryReport
): Promise<Applied> {
  const reason = reasonText(report.reason)
  const now = deps.clock.now()
  const actor = systemActor(report.via)
  const current = await lockInvitation(tx, report.invitationId)
  if (current === null) return { outcome: 'ignored', row: null }
  if (superseded(current, report.sentAt)) {
    if (current.status !== 'pending') return { outcome: 'ignored', row: null }
    await deps.events.record(tx, {
      workspaceId: current.workspaceId,
      action: 'invitation.bounce_superseded',
      actor,
      target: { type: 'invitation', id: current.id },
      payload: {
        email: current.email, reason, permanent: report.permanent, reportedSentAt: report.sentAt?.toISOString()
      },
      now
    })
    return { outcome: 'recorded', row: null }
  }
  const row = report.permanent
    ? await markInvitationBounced(tx, report.invitationId, reason, now)
    : await recordDeliveryDelay(tx, report.invitationId, reason, now)
  if (row === null) return { outcome: 'ignored', row: null }
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
  return { outcome: report.permanent ? 'bounced' : 'recorded', row }
}

/** After the commit: the inviter hears of a bounce in Slack. */
export function tellBounced (deps: BounceDeps, applied: Applied, report: DeliveryReport): void {
  const row = applied.row
  if (applied.outcome !== 'bounced' || row === null) return
  tellInviter(deps, {
    kind: 'bounced',
    workspaceId: row.workspaceId,
    invitationId: row.id,
    inviterId: row.invitedBy,
    email: row.email,
    reason: reasonText(report.reason)
  })
}

/** Apply one report in its own transaction; `ignored` when the invitation's e-mail cannot fail (or no longer). */
export async function recordDeliveryReport (deps: BounceDeps, report: DeliveryReport): Promise<ReportOutcome> {
  const applied = await deps.db.transaction(async tx => await applyDeliveryReport(deps, tx, report))
  deps.log.info(
    { invitationId: report.invitationId, permanent: report.permanent, via: report.via, outcome: applied.outcome },
    `bounce: ${applied.outcome}`
  )
  tellBounced(deps, applied, report)
  return applied.outcome
}
