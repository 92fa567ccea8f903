import { mkdirSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomUUID } from 'node:crypto'
import nodemailer, { type SendMailOptions, type Transporter, type TransportOptions } from 'nodemailer'
import type { Logger } from '../logger.js'
import type { Tracer } from '../lib/telemetry.js'
import { makeDataDir } from '../config/data-dir.js'
import type { MailMessage, Mailer, RelayState } from '../ports/mailer.js'
import { parseMailbox } from '../lib/email.js'

/** How long the SMTP pool keeps its connections once nothing is being sent. */
const POOL_IDLE_MS = 2000

// nodemailer's codes for a relay that could not be used at all (not a refused recipient or message).
const RELAY_DOWN = new Set([
  'ECONNECTION', 'ETIMEDOUT', 'ESOCKET', 'EDNS', 'EAUTH', 'ETLS', 'EPROTOCOL', 'ECONNREFUSED'
])

export interface MailerOptions {
  smtpUrl: string | null
  from: string
  /** The deadline of one send, connect to accepted (nodemailer's own timeouts are minutes). */
  timeoutMs: number
  /** Connections to the relay at most (SMTP_POOL_CONNECTIONS), reused from message to message. */
  poolConnections: number
  dataDir: string | null
  log: Logger
}

export function createMailer (opts: MailerOptions): Mailer {
  return opts.smtpUrl !== null ? smtpMailer(opts.smtpUrl, opts) : devMailbox(opts)
}

function smtpMailer (url: string, opts: MailerOptions): Mailer {
  // A pool of at most `poolConnections` connections (nodemailer's pool: a connection carries
  // message after message, as a relay expects of a bulk sender). Each send has one deadline
  // (SMTP_TIMEOUT_MS, from the wait for a connection to the server's "250 queued"); when it passes
  // the signal aborts the send: nodemailer takes the message out of its queue, or closes the
  // connection delivering it (socketCloseTimeout 0: no graceful QUIT), so a message answered as
  // "not sent" can no longer leave later. The semaphore below hands the pool no more messages than
  // it has connections, so nothing waits inside it where our deadline does not see.
  const options = {
    url,
    pool: true,
    maxConnections: opts.poolConnections,
    maxMessages: Infinity,
    connectionTimeout: opts.timeoutMs,
    greetingTimeout: opts.timeoutMs,
    socketTimeout: opts.timeoutMs,
    dnsTimeout: opts.timeoutMs,
    socketCloseTimeout: 0
  } as TransportOptions
  // The pool lives while mail flows: once nothing has been sent for POOL_IDLE_MS its connections
  // are closed (a relay need not hold an idle client's connection, and a test or an operator
  // watching the relay sees the service let go), and the next send opens a new pool.
  let transport: Transporter | null = null
  let inFlight = 0
  let idleTimer: NodeJS.Timeout | null = null
  let closed = false
  const pool = (): Transporter => {
    if (closed) throw new Error('the mailer is closed')
    if (idleTimer !== null) { clearTimeout(idleTimer); idleTimer = null }
    transport ??= nodemailer.createTransport(options)
    return transport
  }
  const settle = (): void => {
    if (inFlight > 0 || transport === null) return
    idleTimer = setTimeout(() => {
      idleTimer = null
      if (inFlight === 0 && transport !== null) { transport.close(); transport = null }
    }, POOL_IDLE_MS)
    idleTimer.unref()
  }
  const connections = semaphore(opts.poolConnections)
  let state: RelayState = { status: 'unknown', since: new Date().toISOString() }
  const seen = (status: RelayState['status']): void => {
    if (state.status !== status) state = { status, since: new Date().toISOString() }
  }
  const outcome = (err: unknown): void => {
    const code = (err as { code?: string } | null)?.code
    if (code !== undefined && RELAY_DOWN.has(code)) seen('unavailable')
  }
  return {
    kind: 'smtp',
    relayState: () => state,
    async verify () {
      try {
        inFlight++
        try { await pool().verify() } finally { inFlight--; settle() }
        seen('ok')
      } catch (err) {
        seen('unavailable')
        throw err
      }
    },
    async send (msg) {
      const signal = AbortSignal.timeout(opts.timeoutMs)
      try {
        // At most poolConnections at once (servers limit connections per client); the wait for a
        // turn counts against the same deadline.
        await connections.acquire(signal)
        inFlight++
        try {
          // `signal` is nodemailer's (10.x); its type declarations do not have it yet.
          await pool().sendMail(
            {
              from: fromOf(opts.from, msg),
              to: msg.to,
              subject: msg.subject,
              text: msg.text,
              html: msg.html,
              ...(msg.returnPath !== undefined ? { envelope: { from: msg.returnPath, to: msg.to } } : {}),
              ...(msg.date !== undefined ? { date: msg.date } : {}),
              signal
            } as SendMailOptions
          )
        } finally {
          inFlight--
          settle()
          connections.release()
        }
        seen('ok')
      } catch (err) {
        if (signal.aborted) {
          seen('unavailable')
          throw new Error(`SMTP send abandoned after ${opts.timeoutMs} ms`, { cause: err })
        }
        outcome(err)
        throw err
      }
    },
    async close () {
      closed = true
      if (idleTimer !== null) { clearTimeout(idleTimer); idleTimer = null }
      transport?.close()
      transport = null
    }
  }
}

/** MAIL_FROM, or its address under the message's From name ("Acme via Workspace"). */
function fromOf (mailFrom: string, msg: MailMessage): string | { name: string, address: string } {
  if (msg.fromName === undefined) return mailFrom
  return { name: msg.fromName, address: parseMailbox(mailFrom).address }
}

/** A counting semaphore whose wait ends (rejects) when the signal aborts. */
function semaphore (max: number) {
  let free = max
  const waiting: Array<() => void> = []
  return {
    async acquire (signal: AbortSignal): Promise<void> {
      if (free > 0) { free--; return }
      await new Promise<void>((resolve, reject) => {
        const turn = () => { signal.removeEventListener('abort', abort); resolve() }
        const abort = () => { waiting.splice(waiting.indexOf(turn), 1); reject(signal.reason) }
        waiting.push(turn)
        signal.addEventListener('abort', abort, { once: true })
      })
    },
    release (): void {
      const next = waiting.shift()
      if (next !== undefined) next()
      else free++
    }
  }
}

function devMailbox (opts: MailerOptions): Mailer {
  // nodemailer builds the full MIME message; it is written to DATA_DIR/mail instead of sent.
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' })
  // DATA_DIR is proven writable at start, not at the first invitation.
  if (opts.dataDir !== null) makeDataDir(opts.dataDir)
  const dir = opts.dataDir !== null ? join(opts.dataDir, 'mail') : null
  return {
    kind: 'dev-mailbox',
    async send (msg) {
      const info = await transport.sendMail({
        from: fromOf(opts.from, msg),
        to: msg.to,
        subject: msg.subject,
        text: msg.text,
        html: msg.html
      })
      let file: string | null = null
      if (dir !== null) {
        mkdirSync(dir, { recursive: true })
        file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomUUID().slice(0, 8)}.eml`)
        // Written aside, then renamed into place: whoever lists the mailbox (a developer's mail
        // viewer, a test waiting for the next .eml) never reads a message half written.
        writeFileSync(`${file}.part`, info.message as Buffer)
        renameSync(`${file}.part`, file)
      }
      // The link is the message's point on a developer's machine (APP_ENV=local: elsewhere SMTP_URL
      // is required), so it is in the text, not in a field: a link-shaped field is always redacted.
      opts.log.info(
        { to: msg.to, subject: msg.subject, file },
        `e-mail written to the dev mailbox (SMTP_URL not set)${msg.link !== undefined ? `: ${msg.link}` : ''}`
      )
    },
    async close () {}
  }
}

/** The Mailer with a span around each send (tracing on); the recipient is not recorded. */
export function tracedMailer (mailer: Mailer, tracer: Tracer): Mailer {
  return {
    kind: mailer.kind,
    send: async msg => {
      await tracer.span('smtp send', { 'mail.transport': mailer.kind }, async () => { await mailer.send(msg) })
    },
    close: async () => { await mailer.close() }
  }
}
