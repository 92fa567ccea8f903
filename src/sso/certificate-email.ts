import type { MailMessage } from '../ports/mailer.js'
import { oneLine, renderEmail, say, type Reader } from '../emails/shell.js'

// The e-mail telling a workspace admin that a SAML connection's signing certificate nears its end
// (certificate-expiry.ts), in the admin's language; the date in the workspace's time zone.

export interface CertificateNoticeInput {
  to: string
  connectionName: string
  fingerprintSha256: string
  expiresAt: Date
  daysLeft: number
  /** The console's SSO screen, where certificates are added and removed. */
  consoleUrl: string
}

const STEPS = ['certificate.step1', 'certificate.step2', 'certificate.step3']

export function certificateNoticeEmail (reader: Reader, i: CertificateNoticeInput): MailMessage {
  const values = {
    connection: oneLine(i.connectionName),
    expired: i.daysLeft <= 0 ? 'yes' : 'no',
    days: Math.max(i.daysLeft, 0),
    expiresAt: i.expiresAt
  }
  return renderEmail(reader, {
    to: i.to,
    subject: say(reader, 'certificate.subject', values),
    heading: say(reader, 'certificate.heading'),
    blocks: [
      { kind: 'text', text: say(reader, 'certificate.lead', values) },
      { kind: 'code', text: say(reader, 'certificate.fingerprint', { fingerprint: i.fingerprintSha256 }) },
      { kind: 'text', text: say(reader, 'certificate.why') },
      { kind: 'steps', items: STEPS.map(k => say(reader, k)) },
      { kind: 'action', label: say(reader, 'certificate.action'), url: i.consoleUrl },
      { kind: 'note', text: say(reader, 'certificate.audience') }
    ],
    link: i.consoleUrl
  })
}
