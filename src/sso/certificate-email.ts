import type { MailMessage } from '../ports/mailer.js'
import { escapeHtml } from '../lib/html.js'

// The e-mail telling a workspace admin that a SAML connection's signing certificate nears its end
// (certificate-expiry.ts). Plain text and HTML; the connection's and the workspace's names are
// admins' input, escaped in the HTML part and kept to one line in the subject.

export interface CertificateNoticeInput {
  to: string
  workspaceName: string
  connectionName: string
  fingerprintSha256: string
  expiresAt: Date
  daysLeft: number
  /** The console's SSO screen, where certificates are added and removed. */
  consoleUrl: string
}

function oneLine (s: string): string {
  return s.replace(/[\r\n\t]+/g, ' ').trim().slice(0, 150)
}

export function certificateNoticeEmail (i: CertificateNoticeInput): MailMessage {
  const workspace = oneLine(i.workspaceName)
  const connection = oneLine(i.connectionName)
  const date = i.expiresAt.toISOString().slice(0, 10)
  const days = `${i.daysLeft} day${i.daysLeft === 1 ? '' : 's'}`
  const when = i.daysLeft <= 0 ? `expired on ${date}` : `expires on ${date}, in ${days}`
  const state = i.daysLeft <= 0 ? 'has expired' : `expires in ${days}`
  const subject = `${workspace}: the SAML signing certificate of ${connection} ${state}`
  const steps = [
    'Your identity provider signs with a new certificate around then. Sign-in through this connection',
    'accepts only the certificates pinned on it, so add the new one before the provider switches:',
    '1. In the identity provider, create or download the new signing certificate.',
    '2. In the console\'s SSO screen, edit the connection and add it beside the old one.',
    '3. Once the provider signs with the new certificate, remove the old one.'
  ]
  const text = [
    `The signing certificate of the SAML connection "${connection}" in "${workspace}" ${when}.`,
    `SHA-256 fingerprint: ${i.fingerprintSha256}`,
    '',
    ...steps,
    '',
    i.consoleUrl,
    '',
    'Every admin of the workspace gets this e-mail, at 30 days, at 7 days and once it has expired.'
  ].join('\n')
  const html = `<!doctype html>
<html lang="en"><body style="font-family: sans-serif; line-height: 1.5">
<p>The signing certificate of the SAML connection <strong>${escapeHtml(connection)}</strong> in
<strong>${escapeHtml(workspace)}</strong> ${escapeHtml(when)}.</p>
<p>SHA-256 fingerprint: <code>${escapeHtml(i.fingerprintSha256)}</code></p>
<p>${escapeHtml(steps[0] ?? '')} ${escapeHtml(steps[1] ?? '')}</p>
<ol>${steps.slice(2).map(s => `<li>${escapeHtml(s.replace(/^\d\. /, ''))}</li>`).join('')}</ol>
<p><a href="${escapeHtml(i.consoleUrl)}">Open the SSO screen</a></p>
<p style="color: #666">Every admin of the workspace gets this e-mail, at 30 days, at 7 days and once it has expired.</p>
</body></html>`
  return { to: i.to, subject: oneLine(subject), text, html, link: i.consoleUrl }
}
