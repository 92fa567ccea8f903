import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import type { Config } from '../config.js'
import { readDeliveryStatus } from './dsn.js'
import { recordDeliveryReport, type BounceDeps } from './record.js'
import { createReturnPaths } from '../mail/return-path.js'
import { MemoryWindowCounter } from '../lib/window-counter.js'

// The DSN listener (BOUNCE_SMTP_PORT; off by default): an SMTP server that takes mail for the
// invitations' signed return paths only. RCPT TO any other address, or one whose MAC does not
// verify, is refused (550) before any data: a forged return path changes nothing. The message is
// read up to BOUNCE_SMTP_MAX_BYTES (552 beyond), parsed as an RFC 3464 report, applied, and only
// then answered 250; a database that is down answers 451 so the sender tries again later. Plain
// SMTP (no STARTTLS, no AUTH): it sits behind the organisation's MX or the relay, on a private
// address; started by src/server.ts, stopped (in-flight messages finished) when the app closes.
// Limited before any data, so nobody holding one return path (the invitee) floods the audit trail:
// BOUNCE_SMTP_MESSAGES_PER_PEER messages a minute per peer address (at MAIL FROM) and
// BOUNCE_SMTP_REPORTS_PER_RETURN_PATH reports an hour per return path (at RCPT TO), 450 beyond
// (a real relay retries later); counted in this instance's memory, on the service's clock.

export interface BounceListener {
  /** Starts listening; `smtp://host:port`, or null when the listener is off. */
  listen(): Promise<string | null>
  close(): Promise<void>
}

const MAX_RECIPIENTS = 10
const PEER_WINDOW_MS = 60_000
const RETURN_PATH_WINDOW_MS = 3_600_000
/** Counters kept at once (the oldest dropped beyond): bounds the memory a flood of addresses takes. */
const MAX_COUNTED = 10_000
/** Time a close() gives open connections to finish before they are cut. */
const CLOSE_TIMEOUT_MS = 3000

function smtpError (code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code })
}

/** The flood limits, per peer address and per return path: null while within, else the 450 to answer. */
function intakeLimits (
  clock: BounceDeps['clock'], settings: { messagesPerPeer: number, reportsPerReturnPath: number }
): { peer(address: string): Promise<Error | null>, returnPath(invitationId: string): Promise<Error | null> } {
  const counted = new MemoryWindowCounter(MAX_COUNTED, () => clock.now().getTime())
  const count = async (key: string, max: number, windowMs: number, what: string): Promise<Error | null> =>
    (await counted.add(key, 1, windowMs)).current <= max
      ? null
      : smtpError(450, `4.7.1 Too many ${what}; try again later`)
  return {
    peer: async address =>
      await count(`peer:${address}`, settings.messagesPerPeer, PEER_WINDOW_MS, 'messages from this address'),
    returnPath: async id =>
      await count(`path:${id}`, settings.reportsPerReturnPath, RETURN_PATH_WINDOW_MS, 'reports for this return path')
  }
}

export function createBounceListener (deps: BounceDeps & { config: Config }): BounceListener {
  const { config, log } = deps
  const settings = config.bounces.smtp
  const domain = config.bounces.domain
  if (settings === null || domain === null) {
    return { listen: async () => null, close: async () => {} }
  }
  const paths = createReturnPaths({ secrets: config, domain })
  const limits = intakeLimits(deps.clock, settings)

  async function apply (raw: Buffer, session: SMTPServerSession): Promise<void> {
    const { statuses, sentAt } = await readDeliveryStatus(raw)
    const failed = statuses.find(s => s.kind === 'permanent') ?? statuses.find(s => s.kind === 'temporary')
    if (failed === undefined) {
      log.info({ remote: session.remoteAddress }, 'bounce listener: a message with no failure in it (ignored)')
      return
    }
    for (const rcpt of session.envelope.rcptTo) {
      const invitationId = paths.invitationOf(rcpt.address)
      if (invitationId === null) continue
      await recordDeliveryReport(deps, {
        invitationId,
        permanent: failed.kind === 'permanent',
        reason: failed.reason,
        sentAt,
        via: 'delivery status notification'
      })
    }
  }

  const server = new SMTPServer({
    name: domain,
    banner: 'bounces only',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    size: settings.maxBytes,
    maxClients: settings.maxConnections,
    maxRecipients: MAX_RECIPIENTS,
    socketTimeout: 30_000,
    closeTimeout: CLOSE_TIMEOUT_MS,
    onMailFrom (_address, session, cb) {
      limits.peer(session.remoteAddress).then(refusal => {
        if (refusal !== null) log.warn({ remote: session.remoteAddress }, 'bounce listener: a peer over limit (450)')
        cb(refusal ?? undefined)
      }, (err: Error) => { cb(err) })
    },
    onRcptTo (address, session, cb) {
      const invitationId = paths.invitationOf(address.address)
      if (invitationId === null) {
        log.warn({ remote: session.remoteAddress }, 'bounce listener: refused a recipient, no signed return path')
        cb(smtpError(550, '5.1.1 No such return path'))
        return
      }
      limits.returnPath(invitationId).then(refusal => {
        if (refusal !== null) log.warn({ invitationId }, 'bounce listener: a return path over its hour (450)')
        cb(refusal ?? undefined)
      }, (err: Error) => { cb(err) })
    },
    onData (stream: SMTPServerDataStream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => { if (!stream.sizeExceeded) chunks.push(c) })
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          log.warn({ remote: session.remoteAddress, bytes: stream.byteLength }, 'bounce listener: message too large')
          cb(smtpError(552, `5.3.4 Message exceeds the ${settings.maxBytes} bytes allowed`))
          return
        }
        apply(Buffer.concat(chunks), session).then(() => { cb() }, (err: Error) => {
          log.error({ err: err.message }, 'bounce listener: recording the report failed; the sender will retry')
          cb(smtpError(451, '4.3.0 Try again later'))
        })
      })
    }
  })
  // A client that hangs up mid-conversation is routine for a server: logged, never thrown.
  server.on('error', (err: Error) => { log.debug({ err: err.message }, 'bounce listener: connection error') })

  let listening = false
  return {
    async listen () {
      await new Promise<void>((resolve, reject) => {
        const failed = (err: Error) => { reject(err) }
        server.server.once('error', failed)
        server.listen(settings.port, settings.host, () => {
          server.server.off('error', failed)
          resolve()
        })
      })
      listening = true
      const port = (server.server.address() as { port: number }).port
      const url = `smtp://${settings.host.includes(':') ? `[${settings.host}]` : settings.host}:${port}`
      log.info({ url }, 'bounce listener (BOUNCE_SMTP_PORT) ready')
      return url
    },
    async close () {
      if (!listening) return
      listening = false
      await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    }
  }
}
