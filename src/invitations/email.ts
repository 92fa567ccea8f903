import type { MailMessage } from '../ports/mailer.js'
import type { Role } from '../db/users.js'
import { oneLine, renderEmail, say, type Reader } from '../emails/shell.js'

// The one invitation e-mail (fallback path, resend, reminder, create-admin), in the invitee's
// language (the invitation's locale, else the workspace's) and the workspace's look: who invited,
// as what, the link and when it expires, in the workspace's time zone.

export interface InvitationEmailInput {
  to: string
  /** Name or e-mail of the inviting admin; null for the first admin made by create-admin. */
  inviter: string | null
  role: Role
  link: string
  expiresAt: Date
  /** The one reminder before expiry (src/invitations/reminders.ts): same link, said as a reminder. */
  reminder?: boolean
}

export function invitationEmail (reader: Reader, i: InvitationEmailInput): MailMessage {
  const values = {
    hasInviter: i.inviter !== null ? 'yes' : 'no',
    inviter: i.inviter !== null ? oneLine(i.inviter) : '',
    role: i.role,
    expiresAt: i.expiresAt
  }
  const reminder = i.reminder === true
  return renderEmail(reader, {
    to: i.to,
    subject: say(reader, reminder ? 'invitation.reminderSubject' : 'invitation.subject', values),
    heading: say(reader, 'invitation.heading'),
    blocks: [
      ...(reminder ? [{ kind: 'text' as const, text: say(reader, 'invitation.reminder') }] : []),
      { kind: 'text', text: say(reader, 'invitation.lead', values) },
      { kind: 'action', label: say(reader, 'invitation.action'), url: i.link },
      { kind: 'note', text: say(reader, 'invitation.expiry', values) },
      { kind: 'note', text: say(reader, 'invitation.ignore') }
    ],
    link: i.link
  })
}

/** The signup link of the fallback path: always APP_URL, never anything from a request. */
export function signupLink (appUrl: string, token: string): string {
  return `${appUrl}/signup?token=${encodeURIComponent(token)}`
}
