import type { MailMessage } from '../ports/mailer.js'
import { oneLine, renderEmail, say, type Reader } from '../emails/shell.js'

// The e-mail telling a workspace admin that an audit stream was paused after a day of failures
// (delivery.ts), through the one e-mail shell, in the admin's language; the date in the
// workspace's time zone. The stream's name is an admin's input: the shell escapes it.

export interface StreamPausedInput {
  to: string
  streamName: string
  /** The receiver's host (not the URL: its query may hold credentials). */
  host: string
  failingSince: Date
  /** The last answer: an HTTP status, or why there was none (null: none recorded). */
  lastProblem: string | null
  /** The console's Activity screen, where streams are resumed. */
  consoleUrl: string
}

export function streamPausedEmail (reader: Reader, i: StreamPausedInput): MailMessage {
  const values = { stream: oneLine(i.streamName), host: i.host, failingSince: i.failingSince }
  const problem = i.lastProblem ?? say(reader, 'streamPaused.noAnswer')
  return renderEmail(reader, {
    to: i.to,
    subject: say(reader, 'streamPaused.subject', values),
    heading: say(reader, 'streamPaused.heading'),
    blocks: [
      { kind: 'text', text: say(reader, 'streamPaused.lead', values) },
      { kind: 'code', text: say(reader, 'streamPaused.lastAnswer', { problem }) },
      { kind: 'text', text: say(reader, 'streamPaused.resume') },
      { kind: 'action', label: say(reader, 'streamPaused.action'), url: i.consoleUrl }
    ],
    link: i.consoleUrl
  })
}
