import type { FastifyBaseLogger } from 'fastify'

export type Logger = FastifyBaseLogger

// Secrets never reach the logs: cookies, authorization headers and anything named like a token
// or secret are censored, and query strings of browser flows lose their token/code/state values.
export const REDACT_PATHS = [
  'req.headers.cookie',
  'req.headers.authorization',
  'req.headers["x-slack-signature"]',
  'res.headers["set-cookie"]',
  'token', '*.token', 'secret', '*.secret', 'password', '*.password', 'botToken', '*.botToken',
  'access_token', '*.access_token', 'bot_token', '*.bot_token'
]

const SENSITIVE_QUERY = /([?&](?:token|code|state|client_secret)=)[^&#]*/gi

export function redactUrl (url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[REDACTED]')
}

export function loggerOptions (level: string) {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[REDACTED]' },
    serializers: {
      req (req: { method: string, url: string, ip?: string, headers?: Record<string, unknown> }) {
        return { method: req.method, url: redactUrl(req.url), remoteAddress: req.ip ?? '' }
      }
    }
  }
}
