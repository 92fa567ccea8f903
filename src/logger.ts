import type { FastifyBaseLogger } from 'fastify'
import pinoPretty from 'pino-pretty'

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

/**
 * JSON lines for machines (stdout is not a terminal: production, CI, a pipe, a file), readable lines
 * for a person at a terminal (the first `npm start`). LOG_FORMAT=json or pretty decides instead.
 */
export function prettyLogs (format: 'auto' | 'json' | 'pretty', stdout: { isTTY?: boolean }): boolean {
  return format === 'pretty' || (format === 'auto' && stdout.isTTY === true)
}

export function loggerOptions (level: string, opts: { pretty?: boolean } = {}) {
  const options = {
    level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    serializers: {
      req (req: { method: string, url: string, ip?: string, headers?: Record<string, unknown> }) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip ?? '' }
      }
    }
  }
  if (opts.pretty !== true) return options
  // Formatted in this thread from the already redacted record (no transport worker to lose lines
  // at exit); sync so the last lines before process.exit are written.
  return {
    ...options,
    stream: pinoPretty({ sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true })
  }
}
