// A port: who hears about an invitation after its change commits (today the Slack app, wired in
// src/services.ts); src/invitations/inviter-notice.ts tells it.

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
