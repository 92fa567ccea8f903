import type { Logger } from '../logger.js'
import type { InviterNoticeListener, InviterNotice } from '../ports/inviter-notices.js'

// What an inviter is told about their invitation once it is committed: accepted, or its e-mail
// could not be delivered, or bounced. One small function the domain calls after the change; today the Slack
// app listens (a DM, src/slack/notices.ts), later the outgoing events can take its place.

/** Tell the inviter: after the change is committed; a listener's failure never undoes it. */
export function tellInviter (
  deps: { log: Logger, inviterNotices?: InviterNoticeListener | undefined },
  notice: InviterNotice
): void {
  if (notice.inviterId === null || deps.inviterNotices === undefined) return
  try {
    deps.inviterNotices(notice)
  } catch (err) {
    deps.log.warn({ err: (err as Error).message, invitationId: notice.invitationId }, 'telling the inviter failed')
  }
}
