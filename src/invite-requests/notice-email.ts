import type { MailMessage } from '../ports/mailer.js'
import type { InviteRequestRow } from '../db/invite-requests.js'
import { escapeHtml } from '../lib/html.js'

// The e-mail telling an admin that invite requests wait (admin-notices.ts): one request at once, or
// the digest of those that arrived within the hour after it. Plain text and HTML; the addresses
// and the workspace name are other people's input, escaped in the HTML part.

export interface RequestNoticeEmailInput {
  to: string
  workspaceName: string
  requests: InviteRequestRow[]
  /** The console's screen where requests are decided. */
  consoleUrl: string
}

/** A header-safe, single-line version of user text (no CR/LF in the subject). */
function oneLine (s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim().slice(0, 150)
}

export function requestNoticeEmail (i: RequestNoticeEmailInput): MailMessage {
  const workspace = oneLine(i.workspaceName)
  const n = i.requests.length
  const subject = n === 1
    ? `${workspace}: a request to invite ${i.requests[0]?.email ?? ''} waits for you`
    : `${workspace}: ${n} invite requests wait for you`
  const line = (r: InviteRequestRow): string => `${r.email} as ${r.role === 'admin' ? 'an admin' : 'a member'}`
  const text = [
    n === 1 ? `Someone asked to invite a person to "${workspace}":` : `${n} invite requests wait in "${workspace}":`,
    '',
    ...i.requests.map(r => `- ${line(r)}`),
    '',
    'Approve or deny them here:',
    i.consoleUrl,
    '',
    'You get at most one such e-mail an hour. Change how you are told on your Profile in the console.'
  ].join('\n')
  const href = escapeHtml(i.consoleUrl)
  const html = `<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.5">
<p>${n === 1 ? 'Someone asked to invite a person to' : `${n} invite requests wait in`} \
<strong>${escapeHtml(workspace)}</strong>:</p>
<ul>${i.requests.map(r => `<li>${escapeHtml(line(r))}</li>`).join('')}</ul>
<p><a href="${href}">Approve or deny them</a></p>
<p style="color: #666">You get at most one such e-mail an hour. \
Change how you are told on your Profile in the console.</p>
</body></html>`
  return { to: i.to, subject: oneLine(subject), text, html, link: i.consoleUrl }
}
