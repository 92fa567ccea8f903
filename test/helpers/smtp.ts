import { connect, createServer, type Server as NetServer, type Socket } from 'node:net'
import { SMTPServer } from 'smtp-server'
import { SMTPConnection, type SMTPConnectionOptions } from 'smtp-server/lib/smtp-connection'
import { simpleParser } from 'mailparser'

// A real SMTP peer on loopback (smtp-server) that keeps what it receives, and the faults the
// invitation suite needs: refuse at RCPT with 5xx, and a blackhole that accepts TCP and never
// speaks. "Refusing connections" is simply a port nobody listens on (closedPort()).

export interface CaughtMail {
  to: string[]
  /** The envelope sender (MAIL FROM): where the mail's bounces go; '' for the null sender. */
  from: string
  subject: string
  text: string
  html: string
  raw: string
}

export interface SmtpPeer {
  url: string
  port: number
  messages: CaughtMail[]
  /** 'accept' (default) or 'reject-rcpt' (550 at RCPT TO). */
  mode: 'accept' | 'reject-rcpt'
  /**
   * When set, the first message received is kept back (not recorded, not answered) until `others`
   * more messages have arrived, at most `ms`: a server where later sends overtake an earlier one.
   */
  holdFirst: { others: number, ms: number } | null
  /**
   * When set, called as each message's data has arrived and before the peer answers 250: the
   * moment the e-mail has left the sender, which does not know it yet.
   */
  onMessage: (() => void) | null
  /**
   * When set, once this many messages are recorded every further message is held: neither
   * recorded nor answered (a server that never said 250: the message was not accepted).
   */
  holdFrom: number | null
  /** Messages held now (see holdFrom). */
  held: number
  /** Resolves with the next message received (or one already waiting beyond `seen`). */
  nextMessage(seen?: number, timeoutMs?: number): Promise<CaughtMail>
  close(): Promise<void>
}

/**
 * smtp-server holds every new connection 100 ms before its greeting, to catch clients that talk
 * first (spam bots); no option turns that off, and every e-mail a test sends paid it. A loopback
 * peer for our own mailer greets at once: the same connection set-up without the pause.
 */
class PromptSmtpServer extends SMTPServer {
  // SMTPServer.connect (smtp-server 3.21) with SMTPConnection.init's timer left out.
  override connect (socket: Socket, socketOptions?: SMTPConnectionOptions | null): void {
    const connection = new SMTPConnection(this, socket, socketOptions)
    this.connections.add(connection)
    connection.on('error', (err: Error) => { this.emit('error', err) })
    connection.on('connect', (data: unknown) => { this.emit('connect', data) })
    connection._setListeners(() => { connection.connectionReady() })
  }
}

export async function startSmtp (t: { teardown(fn: () => unknown): void }): Promise<SmtpPeer> {
  const messages: CaughtMail[] = []
  const waiters: Array<() => void> = []
  let received = 0
  let accepted = 0
  const overtaken = async (hold: { others: number, ms: number }): Promise<void> => {
    await peer.nextMessage(messages.length + hold.others - 1, hold.ms).catch(() => {})
  }
  const peer: SmtpPeer = {
    url: '',
    port: 0,
    messages,
    mode: 'accept',
    holdFirst: null,
    onMessage: null,
    holdFrom: null,
    held: 0,
    async nextMessage (seen = messages.length, timeoutMs = 5000) {
      // Woken by each arriving message (onData below); one timer bounds the whole wait.
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error('no e-mail arrived at the SMTP peer')) }, timeoutMs)
        const check = (): void => {
          if (messages.length > seen) { clearTimeout(timer); resolve() } else waiters.push(check)
        }
        check()
      })
      return messages[seen] as CaughtMail
    },
    async close () { await new Promise<void>(resolve => { server.close(() => { resolve() }) }) }
  }
  const server = new PromptSmtpServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    onRcptTo (_address, _session, cb) {
      if (peer.mode === 'reject-rcpt') {
        const e = new Error(
          'mailbox unavailable'
        ) as Error & { responseCode: number }; e.responseCode = 550; cb(e); return
      }
      cb()
    },
    onData (stream, session, cb) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8')
        if (peer.holdFrom !== null && accepted >= peer.holdFrom) {
          peer.held++
          return
        }
        accepted++
        peer.onMessage?.()
        const hold = received++ === 0 && peer.holdFirst !== null ? overtaken(peer.holdFirst) : Promise.resolve()
        hold.then(async () => await simpleParser(raw)).then(parsed => {
          messages.push({
            to: session.envelope.rcptTo.map(r => r.address),
            from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            raw
          })
          for (const w of waiters.splice(0)) w()
          cb()
        }, cb)
      })
    }
  })
  // A client that hangs up mid-conversation (a send abandoned at its deadline) is routine for a
  // server: smtp-server reports it as an 'error' event, which would otherwise be thrown.
  server.on('error', () => {})
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  peer.port = (server.server.address() as { port: number }).port
  peer.url = `smtp://127.0.0.1:${peer.port}`
  t.teardown(async () => { await peer.close() })
  return peer
}

/** A TCP server that accepts connections and never answers: an SMTP server that hangs. */
export async function startBlackhole (
  t: { teardown(fn: () => unknown): void }
): Promise<{ url: string, connected: () => Promise<void> }> {
  const sockets = new Set<Socket>()
  let onConnection: Array<() => void> = []
  const server: NetServer = createServer(s => {
    sockets.add(s); s.on('error', () => {}); s.on('close', () => sockets.delete(s))
    for (const f of onConnection) f()
    onConnection = []
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  t.teardown(async () => {
    for (const s of sockets) s.destroy()
    await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  })
  return {
    url: `smtp://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** Resolves at the next connection a client opens (a send has begun). */
    connected: async () => { await new Promise<void>(resolve => { onConnection.push(resolve) }) }
  }
}

/** A loopback port with nothing listening (connection refused). */
export async function closedPort (): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => { resolve() }) })
  const port = (server.address() as { port: number }).port
  await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  return port
}

/**
 * A front for an SMTP peer on a fixed port that can fail the way a real server does:
 * 'silent' accepts TCP and never speaks (a frozen server: held connections are handed to the
 * server when it comes back, as a thawed process would answer them), 'refusing' has nothing
 * listening (connection refused), 'up' forwards. `idle()` resolves once no connection is open.
 */
export interface SmtpFront {
  url: string
  silent(): void
  refusing(): Promise<void>
  up(): Promise<void>
  /** Connections the silent server holds now. */
  held(): number
  /** Connections accepted since the front started, and open now. */
  connections(): { accepted: number, open: number }
  idle(timeoutMs?: number): Promise<void>
}

export async function startSmtpFront (
  t: { teardown(fn: () => unknown): void },
  peer: { port: number }
): Promise<SmtpFront> {
  let mode: 'up' | 'silent' | 'refusing' = 'up'
  const held = new Set<Socket>()
  const open = new Set<Socket>()
  let accepted = 0
  const idleWaiters: Array<() => void> = []
  const forward = (client: Socket) => {
    const upstream = connect(peer.port, '127.0.0.1')
    const end = () => { client.destroy(); upstream.destroy() }
    upstream.on('error', end).on('close', end)
    client.on('error', end).on('close', end)
    client.pipe(upstream).pipe(client)
  }
  const server = createServer(client => {
    accepted++
    open.add(client)
    client.on('error', () => {})
    client.on('close', () => {
      open.delete(client)
      held.delete(client)
      if (open.size === 0) for (const w of idleWaiters.splice(0)) w()
    })
    if (mode === 'silent') held.add(client)
    else forward(client)
  })
  const listen = async (port: number) => {
    await new Promise<void>(resolve => {
      server.listen(
        port, '127.0.0.1', () => { resolve() }
      )
    })
  }
  await listen(0)
  const port = (server.address() as { port: number }).port
  t.teardown(async () => {
    for (const s of open) s.destroy()
    if (server.listening) await new Promise<void>(resolve => { server.close(() => { resolve() }) })
  })
  return {
    url: `smtp://127.0.0.1:${port}`,
    silent () { mode = 'silent' },
    async refusing () {
      mode = 'refusing'
      for (const s of open) s.destroy()
      await new Promise<void>(resolve => { server.close(() => { resolve() }) })
    },
    async up () {
      const was = mode
      mode = 'up'
      if (was === 'refusing') await listen(port)
      for (const s of held) if (!s.destroyed) forward(s)
      held.clear()
    },
    held: () => held.size,
    connections: () => ({ accepted, open: open.size }),
    async idle (timeoutMs = 10_000) {
      if (open.size === 0) return
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => { reject(new Error(`${open.size} SMTP connection(s) still open after ${timeoutMs} ms`)) }, timeoutMs
        )
        idleWaiters.push(() => { clearTimeout(timer); resolve() })
      })
    }
  }
}
