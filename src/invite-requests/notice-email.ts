import type { MailMessage } from '../ports/mailer.js'
import type { InviteRequestRow } from '../db/invite-requests.js'
import { renderEmail, say, type Reader } from '../emails/shell.js'

// The e-mail telling an admin that invite requests wait (admin-notices.ts): one request at once, or
// the digest of those that arrived within the hour after it; in the admin's language.

export interface RequestNoticeEmailInput {
  to: string
  requests: InviteRequestRow[]
  /** The console's screen where requests are decided. */
  consoleUrl: string
}

export function requestNoticeEmail (reader: Reader, i: RequestNoticeEmailInput): MailMessage {
  const values = { count: i.requests.length, email: i.requests[0]?.email ?? '' }
  return renderEmail(reader, {
    to: i.to,
    subject: say(reader, 'requestNotice.subject', values),
    heading: say(reader, 'requestNotice.heading', values),
    blocks: [
      { kind: 'text', text: say(reader, 'requestNotice.lead', values) },
      { kind: 'list', items: i.requests.map(r => say(reader, 'requestNotice.item', { email: r.email, role: r.role })) },
      { kind: 'action', label: say(reader, 'requestNotice.action', values), url: i.consoleUrl },
      { kind: 'note', text: say(reader, 'requestNotice.frequency') }
    ],
    link: i.consoleUrl
  })
}
