import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server'
import type { Config } from '../config.js'
import { readDeliveryStatus } from './dsn.js'
import { recordDeliveryReport, type BounceDeps } from './record.js'
import { createReturnPaths } from './return-path.js'

// The DSN listener (BOUNCE_SMTP_PORT; off by default): an SMTP server that takes mail for the
// invitations' signed return paths only. RCPT TO any other address, or one whose MAC does not
// verify, is refused (550) before any data: a forged return path changes nothing. The message is
// read up to BOUNCE_SMTP_MAX_BYTES (552 beyond), parsed as an RFC 3464 report, applied, and only
// then answered 250; a database that is down answers 451 so the sender tries again later. Plain
// SMTP (no STARTTLS, no AUTH): it sits behind the organisation's MX or the relay, on a private
// address; started by src/server.ts, stopped (in-flight messages finished) when the app closes.

export interface BounceListener {
  /** Starts listening; `smtp://host:port`, or null when the listener is off. */
  listen(): Promise<string | null>
  close(): Promise<void>
}

const MAX_RECIPIENTS = 10
/** Time a close() gives open connections to finish before they are cut. */
const CLOSE_TIMEOUT_MS = 3000

function smtpError (code: number, message: string): Error {
  return Object.assign(new Error(message), { responseCode: code })
}

export function createBounceListener (deps: BounceDeps & { config: Config }): BounceListener {
  const { config, log } = deps
  const settings = config.bounces.smtp
  const domain = config.bounces.domain
  if (settings === null || domain === null) {
    return { listen: async () => null, close: async () => {} }
  }
  const paths = createReturnPaths({ secrets: config, domain })

  async function apply (raw: Buffer, session: SMTPServerSession): Promise<void> {
    const statuses = await readDeliveryStatus(raw)
    const failed = statuses.find(s => s.kind === 'permanent') ?? statuses.find(s => s.kind === 'temporary')
    if (failed === undefined) {
      log.info({ remote: session.remoteAddress }, 'bounce listener: a message with no failure in it (ignored)')
      return
    }
    for (const rcpt of session.envelope.rcptTo) {
      const invitationId = paths.invitationOf(rcpt.address)
      if (invitationId === null) continue
      await recordDeliveryReport(deps, {
        invitationId, permanent: failed.kind === 'permanent', reason: failed.reason, via: 'delivery status notification'
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
    onRcptTo (address, session, cb) {
      if (paths.invitationOf(address.address) !== null) { cb(); return }
      log.warn({ remote: session.remoteAddress }, 'bounce listener: refused a recipient that is no signed return path')
      cb(smtpError(550, '5.1.1 No such return path'))
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
