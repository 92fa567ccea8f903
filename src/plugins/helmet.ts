import type { IncomingMessage, ServerResponse } from 'node:http'
import fp from 'fastify-plugin'
import helmet, { type HelmetOptions } from 'helmet'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'

// Security headers by kind of answer, chosen by the response's own Content-Type when it leaves
// (an onSend hook): whatever answered — a handler, the error or not-found handler, a JSON error
// from an HTML route — the headers fit what is sent. Three kinds:
//
// - api: JSON (application/json, application/scim+json, any +json), server-sent events and every
//   other answer that is not a document or an asset (redirects, empty bodies). OWASP's REST set:
//   `Cache-Control: no-store`, `Content-Security-Policy: default-src 'none'; frame-ancestors
//   'none'`, nosniff, `X-Frame-Options: DENY`, `Cross-Origin-Resource-Policy: same-origin`, and
//   `apiHeaders` (API-Version, src/plugins/contract-lifecycle.ts). Nothing meant for documents
//   (COOP, Origin-Agent-Cluster, Referrer-Policy, X-DNS-Prefetch-Control, …: helmet's FAQ says
//   they can be left off non-document answers).
// - document: text/html. helmet's document set (COOP, Origin-Agent-Cluster, Referrer-Policy
//   no-referrer, X-Frame-Options DENY, nosniff, …) and `Cache-Control: no-store`; each page sets
//   its own CSP with its nonce (src/http/page-shell.ts), which replaces the one here.
// - asset: scripts, styles, images, fonts. nosniff, CORP, the API's CSP (an SVG opened as a
//   document runs nothing); their Cache-Control is their route's.
//
// A header the handler set wins (a page's CSP, an asset's Cache-Control, the contract's
// `no-cache` on /api/openapi.json): there is one of each, never two. HSTS is on every kind when
// the service is reached over https: PUBLIC_URL is https, or the request came through a trusted
// proxy saying X-Forwarded-Proto: https (TRUST_PROXY); on http://localhost it would be a trap.
//
// Each set is computed once at start (helmet's middleware run once against a recorder: nothing
// in them depends on the request), and put on through the reply's public API (reply.getHeaders,
// reply.header), which keeps them in Fastify's headers until it writes the head.

export const HSTS = 'max-age=31536000'
export const API_CSP = "default-src 'none'; frame-ancestors 'none'"

const DOCUMENT_OPTIONS: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] }
  },
  frameguard: { action: 'deny' },
  referrerPolicy: { policy: 'no-referrer' },
  strictTransportSecurity: false
}

export type AnswerKind = 'api' | 'document' | 'asset'
const JSON_UTF8 = 'application/json; charset=utf-8'
const KINDS: AnswerKind[] = ['api', 'document', 'asset']

/** The kind of an answer by its Content-Type (parameters and case ignored). */
export function answerKind (contentType: unknown): AnswerKind {
  // Fastify's own for every JSON answer: most answers, decided by one comparison.
  if (contentType === JSON_UTF8) return 'api'
  if (typeof contentType !== 'string') return 'api'
  const type = contentType.trimStart().toLowerCase()
  if (type.startsWith('application/json')) return 'api'
  if (type.startsWith('text/html')) return 'document'
  if (type.startsWith('text/javascript') || type.startsWith('application/javascript') ||
      type.startsWith('text/css') || type.startsWith('image/') || type.startsWith('font/')) return 'asset'
  return 'api'
}

/** helmet's document headers with these options, recorded once. */
function documentHeaders (): Record<string, string> {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: string) { headers[name.toLowerCase()] = value },
    removeHeader () {}
  }
  helmet(DOCUMENT_OPTIONS)({} as IncomingMessage, recorder as unknown as ServerResponse, () => {})
  return { ...headers, 'cache-control': 'no-store' }
}

const FIXED: Record<AnswerKind, () => Record<string, string>> = {
  api: () => ({
    'cache-control': 'no-store',
    'content-security-policy': API_CSP,
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-resource-policy': 'same-origin'
  }),
  document: documentHeaders,
  asset: () => ({
    'content-security-policy': API_CSP,
    'x-content-type-options': 'nosniff',
    'cross-origin-resource-policy': 'same-origin'
  })
}

/**
 * The headers of one kind of answer. `https`: the request came over https through a trusted
 * proxy (PUBLIC_URL https adds HSTS anyway). `apiHeaders` go on the api kind only. Also used for
 * the answers written before Fastify's hooks run (router refusals, unparsable HTTP: JSON errors).
 */
export function securityHeaders (
  config: Config, kind: AnswerKind, https = false, apiHeaders: Record<string, string> = {}
): Record<string, string> {
  const overHttps = https || config.publicUrl.startsWith('https://')
  return {
    ...FIXED[kind](),
    ...(kind === 'api' ? apiHeaders : {}),
    ...(overHttps ? { 'strict-transport-security': HSTS } : {})
  }
}

async function securityHeadersPlugin (
  app: FastifyInstance, opts: { config: Config, apiHeaders?: Record<string, string> }
): Promise<void> {
  const { config, apiHeaders } = opts
  // Indexed by kind * 2 + (over https ? 1 : 0); each set as [name, value] pairs.
  const sets = KINDS.flatMap(kind =>
    [false, true].map(https => Object.entries(securityHeaders(config, kind, https, apiHeaders))))
  const index: Record<AnswerKind, number> = { api: 0, document: 2, asset: 4 }
  // Whether the request's protocol matters: not when PUBLIC_URL is https (HSTS on every answer).
  const hstsVaries = !config.publicUrl.startsWith('https://')
  // A callback hook (not async): no promise per answer.
  app.addHook('onSend', (request, reply, payload, done) => {
    // request.protocol reads X-Forwarded-Proto only from a trusted proxy (Fastify's trustProxy).
    const https = hstsVaries && request.protocol === 'https'
    // Fastify's headers and any set on the raw response, by lower-case name.
    const present = reply.getHeaders()
    const set = sets[index[answerKind(present['content-type'])] + (https ? 1 : 0)] as Array<[string, string]>
    for (const [name, value] of set) {
      if (present[name] === undefined) reply.header(name, value)
    }
    done(null, payload)
  })
}

export default fp(securityHeadersPlugin, { name: 'security-headers' })
