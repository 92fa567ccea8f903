import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify'
import { createRequire } from 'node:module'
import { writeSync } from 'node:fs'
import { Writable } from 'node:stream'

export type Logger = FastifyBaseLogger

// Secrets never reach the logs: cookies, authorization headers and anything named like a token
// or secret are censored, and query strings of browser flows lose their token/code/state values.
const REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-slack-signature"]',
  'res.headers["set-cookie"]',
  'token', '*.token', 'secret', '*.secret', 'password', '*.password', 'botToken', '*.botToken',
  'access_token', '*.access_token', 'bot_token', '*.bot_token'
]

const SENSITIVE_PARAMS = new Set(['token', 'code', 'state', 'client_secret'])

/** A query parameter's name as the server reads it: percent-decoded, `+` as space, any case. */
function paramName (raw: string): string | null {
  try {
    return decodeURIComponent(raw.replaceAll('+', ' ')).toLowerCase()
  } catch {
    return null
  }
}

/** The URL with the values of sensitive query parameters replaced; names are matched after decoding. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
  const hash = url.indexOf('#', q)
  const query = url.slice(q + 1, hash === -1 ? undefined : hash)
  const redacted = query.split('&').map(pair => {
    const eq = pair.indexOf('=')
    if (eq === -1) return pair
    const name = paramName(pair.slice(0, eq))
    return name !== null && SENSITIVE_PARAMS.has(name) ? `${pair.slice(0, eq)}=[REDACTED]` : pair
  }).join('&')
  return url.slice(0, q + 1) + redacted + (hash === -1 ? '' : url.slice(hash))
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s"'<>]+/gi
const MAX_DEPTH = 4

/**
 * A logged value with every token-bearing URL in it redacted (redactUrl), wherever it sits: a
 * field named `link`, `url`, `next`, an error's details. Only what changes is copied.
 */
function redactLinks (value: unknown, depth = 0): unknown {
  if (typeof value === 'string') {
    return value.includes('://') ? value.replace(URL_IN_TEXT, url => redactUrl(url)) : value
  }
  if (value === null || typeof value !== 'object' || depth >= MAX_DEPTH) return value
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null
    value.forEach((item, i) => {
      const r = redactLinks(item, depth + 1)
      if (r !== item) (copy ??= [...value])[i] = r
    })
    return copy ?? value
  }
  // Plain records only: errors, buffers and requests have serializers of their own.
  const proto = Object.getPrototypeOf(value) as unknown
  if (proto !== Object.prototype && proto !== null) return value
  let copy: Record<string, unknown> | null = null
  for (const [key, item] of Object.entries(value)) {
    const r = redactLinks(item, depth + 1)
    if (r !== item) (copy ??= { ...value as Record<string, unknown> })[key] = r
  }
  return copy ?? value
}

/**
 * JSON lines for machines (stdout is not a terminal: production, CI, a pipe, a file), readable lines
 * for a person at a terminal (the first `npm start`). LOG_FORMAT=json or pretty decides instead.
 */
export function prettyLogs (format: 'auto' | 'json' | 'pretty', stdout: { isTTY?: boolean }): boolean {
  return format === 'pretty' || (format === 'auto' && stdout.isTTY === true)
}

// What a write to standard output fails with once nobody can read it: the terminal was closed
// (EIO; the kernel hung it up), the pipe's reader left (EPIPE), the descriptor is gone (EBADF).
const GONE = new Set(['EIO', 'EPIPE', 'EBADF', 'ENXIO', 'ECONNRESET'])

/**
 * Standard output as a log destination written synchronously (the last lines before
 * process.exit are written) that falls silent, for good, once standard output is gone. Before,
 * a closed terminal made each log line throw EIO; the error was logged, which threw again, and
 * the process spun at full CPU and never exited (README "When things fail").
 */
function stdoutDestination (fd = 1): Writable {
  let gone = false
  const pause = new Int32Array(new SharedArrayBuffer(4))
  return new Writable({
    write (chunk: Buffer, _enc, done) {
      // A terminal may take part of a line, or none for a moment (EAGAIN): the rest is retried,
      // briefly (a stopped terminal loses the line rather than stalling the service).
      let rest = chunk
      for (let busy = 0; !gone && rest.length > 0 && busy < 50;) {
        try {
          rest = rest.subarray(writeSync(fd, rest))
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code ?? ''
          if (GONE.has(code)) gone = true
          else if (code === 'EAGAIN') { busy++; Atomics.wait(pause, 0, 0, 10) } else { done(err as Error); return }
        }
      }
      done()
    }
  })
}

/**
 * pino's options. `pretty`: readable lines (pino-pretty, formatted in this thread); `terminal`:
 * standard output is a terminal, which can be closed under the process (stdoutDestination).
 */
export function loggerOptions (level: string, opts: { pretty?: boolean, terminal?: boolean } = {}) {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    // A sign-in, signup or setup link is a live credential: in any field, its token is censored.
    formatters: { log: (record: Record<string, unknown>) => redactLinks(record) as Record<string, unknown> },
    serializers: {
      req (req: { method: string, url: string, ip?: string, headers?: Record<string, unknown> }) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip ?? '' }
      }
    }
  }
  if (opts.pretty !== true) return opts.terminal === true ? { ...options, stream: stdoutDestination() } : options
  // Formatted in this thread from the already redacted record (no transport worker to lose lines
  // at exit), written synchronously so the last lines before process.exit are written.
  // Loaded only for LOG_FORMAT=pretty (31 modules that JSON logs never use).
  const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty')
  return {
    ...options,
    stream: pinoPretty({
      destination: stdoutDestination(), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true
    })
  }
}

/** What pino's logger has beyond Fastify's logger interface (pino's public API). */
type PinoLogger = Logger & { isLevelEnabled(level: string): boolean }

/** Whether the request's logger writes info lines (a logger without levels: as if it did). */
function infoOn (request: FastifyRequest): boolean {
  const log = request.log as Partial<PinoLogger>
  return typeof log.isLevelEnabled !== 'function' || log.isLevelEnabled('info')
}

/**
 * Fastify's lines for every request ("incoming request", "request completed") are info lines:
 * below info the logger drops them, after Fastify built their objects and read the clock for the
 * response time, on every request. Skipped here while info is off; a response that failed is
 * logged as before, and so are Fastify's other lines (the error handler's, a stream's, a 404's).
 */
export class RequestLogController extends LogController {
  override incomingRequest (request: FastifyRequest, reply: FastifyReply): void {
    if (infoOn(request)) super.incomingRequest(request, reply)
  }

  override requestCompleted (error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error != null || infoOn(request)) super.requestCompleted(error, request, reply)
  }
}
