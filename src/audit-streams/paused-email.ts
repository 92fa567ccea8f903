import type { MailMessage } from '../ports/mailer.js'
import { escapeHtml } from '../lib/html.js'

// The e-mail telling a workspace admin that an audit stream was paused after a day of failures
// (delivery.ts). Plain text and HTML; the stream's and the workspace's names are admins' input,
// escaped in the HTML part and kept to one line in the subject.

export interface StreamPausedInput {
  to: string
  workspaceName: string
  streamName: string
  /** The receiver's host (not the URL: its query may hold credentials). */
  host: string
  failingSince: Date
  /** The last answer: an HTTP status, or why there was none. */
  lastProblem: string
  /** The console's Activity screen, where streams are resumed. */
  consoleUrl: string
}

function oneLine (s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim().slice(0, 150)
}

export function streamPausedEmail (i: StreamPausedInput): MailMessage {
  const workspace = oneLine(i.workspaceName)
  const stream = oneLine(i.streamName)
  const since = i.failingSince.toISOString()
  const lines = [
    `The audit stream "${stream}" of "${workspace}" was paused: its receiver (${i.host}) has failed since ${since}.`,
    `Last answer: ${i.lastProblem}.`,
    '',
    'Nothing is lost: the audit trail keeps every record, and the stream resumes from the last record the',
    'receiver acknowledged. Fix the receiver (or the stream\'s URL or token), then resume the stream in the',
    'console\'s Activity screen.',
    '',
    i.consoleUrl
  ]
  const html = `<!doctype html>
<html lang="en"><body style="font-family: sans-serif; line-height: 1.5">
<p>The audit stream <strong>${escapeHtml(stream)}</strong> of <strong>${escapeHtml(workspace)}</strong> was paused:
its receiver (${escapeHtml(i.host)}) has failed since ${escapeHtml(since)}.</p>
<p>Last answer: ${escapeHtml(i.lastProblem)}.</p>
<p>Nothing is lost: the audit trail keeps every record, and the stream resumes from the last record the receiver
acknowledged. Fix the receiver (or the stream's URL or token), then resume the stream.</p>
<p><a href="${escapeHtml(i.consoleUrl)}">Open the Activity screen</a></p>
</body></html>`
  return {
    to: i.to,
    subject: oneLine(`${workspace}: the audit stream ${stream} was paused`),
    text: lines.join('\n'),
    html,
    link: i.consoleUrl
  }
}
