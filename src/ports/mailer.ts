export interface MailMessage {
  to: string
  subject: string
  text: string
  html: string
  /** The one link the message exists to deliver; the dev mailbox (local only) logs it in its text. */
  link?: string
  /**
   * The envelope sender (SMTP MAIL FROM), where delivery status notifications go: an invitation's
   * signed return path (src/mail/return-path.ts). Absent: MAIL_FROM's address, as always.
   */
  returnPath?: string | undefined
  /** The Date header (default: when the message is built): a bounce report names its send by it. */
  date?: Date | undefined
  /** The From name (the workspace's sender name, src/emails/shell.ts); the address stays MAIL_FROM's. */
  fromName?: string | undefined
}

/** The mail relay as last seen: at start (verify), then by every send. */
export interface RelayState {
  status: 'ok' | 'unavailable' | 'unknown'
  /** When it entered this state (ISO 8601). */
  since: string
}

/** The Mailer port: SMTP through nodemailer, or the dev mailbox (.eml files) when SMTP is not set (src/mail/). */
export interface Mailer {
  readonly kind: 'smtp' | 'dev-mailbox'
  /** Resolves when the server accepted the message; rejects (bounded by timeouts) otherwise. */
  send(msg: MailMessage): Promise<void>
  close(): Promise<void>
  /** A relay only: connect and greet it now (at start), within the send deadline; rejects if it fails. */
  verify?(): Promise<void>
  /** A relay only: its state as last seen, never by a new connection (health reads it). */
  relayState?(): RelayState
}
