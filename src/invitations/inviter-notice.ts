import type { Logger } from '../logger.js'

// What an inviter is told about their invitation once it is committed: accepted, or its e-mail
// could not be delivered, or bounced. One small function the domain calls after the change; today the Slack
// app listens (a DM, src/slack/notices.ts), later the outgoing events can take its place.

export interface InviterNotice {
  kind: 'accepted' | 'delivery_failed' | 'bounced'
  workspaceId: string
  invitationId: string
  /** Who sent the invitation (null: an API key, or the user was removed). */
  inviterId: string | null
  email: string
  /** Why it bounced (the recipient's server's answer), for 'bounced'. */
  reason?: string | undefined
}

/** Whoever listens (the Slack app, wired in src/services.ts); must not throw, must not block. */
export type InviterNoticeListener = (notice: InviterNotice) => void

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
