import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'

// Security headers on every response, JSON and errors included: written by the first onRequest
// hook onto the reply, so whatever answers later — a handler, the error or not-found handler —
// carries them; the two answers given before any hook runs use securityHeaders() too. helmet
// computes them once, at start (they depend on nothing in the request): @fastify/helmet would
// build helmet's middleware again for every request (its options parsed, the CSP re-serialized),
// a few µs of every answer for the same eleven headers.
//
// - Content-Security-Policy: `default-src 'none'; frame-ancestors 'none'` for everything; the HTML
//   pages replace it with their own, which carries the page's nonce (src/auth/pages.ts; a header
//   the handler sets replaces the one set here, so there is one CSP, never two).
// - X-Frame-Options DENY, Referrer-Policy no-referrer, X-Content-Type-Options nosniff, and
//   helmet's other defaults (Cross-Origin-Opener/Resource-Policy same-origin …).
// - Strict-Transport-Security only when the service is reached over https: PUBLIC_URL is https,
//   or the request came through a trusted proxy saying X-Forwarded-Proto: https (TRUST_PROXY).
//   Over plain http a browser ignores it anyway, and on http://localhost it would be a trap.
// - `apiHeaders` (API-Version, src/plugins/contract-lifecycle.ts) on every /api answer.
//
// Written as one precomputed set per kind of answer (https or not, /api or not), onto Fastify's
// reply headers rather than the raw response: one raw setHeader sends Node's writeHead down its
// slow path (every header then validated and stored twice), and eleven were a tenth of a health
// request (docs/performance.md).

export const HSTS = 'max-age=31536000'
const OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] }
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: false
}

let recorded: Record<string, string> | undefined

/**
 * The headers helmet sets with these options, as a plain object, for the answers written before
 * Fastify's hooks run (router refusals, unparsable HTTP). They are the same on every response:
 * nothing in them depends on the request. HSTS is added when PUBLIC_URL is https, or `https` says
 * the request came over https through a trusted proxy.
 */
export function securityHeaders (config: Config, https = false): Record<string, string> {
  if (recorded === undefined) {
    const headers: Record<string, string> = {}
    const recorder = {
      setHeader (name: string, value: string) { headers[name.toLowerCase()] = value },
      removeHeader () {}
    }
    const middleware = helmet(OPTIONS)
    middleware({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
    recorded = headers
  }
  const overHttps = https || config.publicUrl.startsWith('https://')
  return overHttps ? { ...recorded, 'strict-transport-security': HSTS } : recorded
}

/** The URLs whose answers carry the API's own headers (API-Version). */
const isApiUrl = (url: string): boolean => url.startsWith('/api/') || url === '/api'

/** A header set as two arrays, walked by index on every request (no entries, no iterator). */
interface HeaderSet { names: string[], values: string[] }
const headerSet = (headers: Record<string, string>): HeaderSet =>
  ({ names: Object.keys(headers), values: Object.values(headers) })

async function securityHeadersPlugin (
  app: FastifyInstance, opts: { config: Config, apiHeaders?: Record<string, string> }
): Promise<void> {
  const plain = securityHeaders(opts.config)
  const withHsts = securityHeaders(opts.config, true)
  // Whether the request's protocol matters: not when PUBLIC_URL is https (HSTS on every answer).
  const hstsVaries = !('strict-transport-security' in plain)
  // Indexed by (over https ? 2 : 0) + (an /api URL ? 1 : 0).
  const sets = [plain, withHsts].flatMap(base => [headerSet(base), headerSet({ ...base, ...opts.apiHeaders })])
  // A callback hook (not async): no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    // request.protocol reads X-Forwarded-Proto only from a trusted proxy (Fastify's trustProxy).
    const https = hstsVaries && request.protocol === 'https'
    const { names, values } = sets[(https ? 2 : 0) + (isApiUrl(request.url) ? 1 : 0)] as HeaderSet
    for (let i = 0; i < names.length; i++) reply.header(names[i] as string, values[i])
    done()
  })
}

export default fp(securityHeadersPlugin, { name: 'security-headers' })
