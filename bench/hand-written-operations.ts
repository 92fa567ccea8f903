import { randomUUID } from 'node:crypto'
import { createRequire } from 'node:module'
import type { ValidateFunction } from 'ajv'
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import { errorBody, formatSchemaErrors, toServiceError } from '../src/error-response.js'
import { serviceError } from '../src/errors.js'
import { parseJsonBody } from '../src/json-body.js'
import { loggerOptions, type Logger } from '../src/logger.js'
import { securityHeaders } from '../src/plugins/helmet.js'
import type { Principal } from '../src/principal.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { createSerializerCompiler, createValidatorCompiler } from '../src/validation.js'
import {
  base, bearer, config, health, listQuery, listQuerySchema, schemaOf, services, withSecurityHeaders
} from './hand-written-work.js'

// The operations of the hand-written baselines whose framework has none of Fastify's schema
// compilers, hooks or plugins (bench/hand-written-hono.ts, bench/hand-written-express.ts), as
// plain functions each framework's routes call: what Fastify and its plugins do for
// bench/hand-written.ts, done here by hand with the same pieces, in the same order —
//  - the request body and query through the same Ajv validators (src/validation.ts), failures
//    formatted by the same formatter; answers through the same fast-json-stringify serializers;
//  - the body parsed as the service parses JSON (secure-json-parse, src/json-body.ts), JSON only;
//  - the session cookie read with @fastify/cookie's parser and verified with @fastify/jwt's
//    verifier (the service's app's own, same options) before the body is read; after the body's
//    validation, the session row and the admin role, as Fastify's preHandler runs after it;
//  - MCP's door: the API key, then a fixed window per key of API_KEY_RATE_LIMIT_PER_MINUTE
//    (@fastify/rate-limit's local store: the same count, the same 429 and headers);
//  - a request id from randomUUID and a child of the service's logger (pino with the service's
//    options and level) per request; 5xx logged; the security headers on every answer (computed
//    once, as src/plugins/helmet.ts does); each request's duration in the metrics histogram when
//    METRICS_PORT is set (prom-client's histogram, as src/plugins/metrics.ts records it).
// The frameworks differ by routing, request and response objects and middleware alone.

/** An answer as a framework writes it. */
export interface Answer { status: number, headers: Record<string, string>, body: string }

const JSON_HEADERS: Record<string, string> = {
  'content-type': 'application/json; charset=utf-8',
  ...(withSecurityHeaders ? securityHeaders(config, 'api') : {})
}

// pino as Fastify brings it (the service logs through Fastify's): that one, by Fastify's own resolution.
const pino = createRequire(createRequire(import.meta.url).resolve('fastify'))('pino') as (opts: object) => Logger
const rootLogger = pino(loggerOptions(config.logLevel))

/** A request's id and logger, as Fastify makes them for each request. */
export function requestContext (): { id: string, log: Logger } {
  const id = randomUUID()
  return { id, log: rootLogger.child({ reqId: id }) }
}

// Each request's duration, as the metrics plugin observes it (none without METRICS_PORT).
const durations = config.metrics.port === null
  ? null
  : (() => {
      const register = new Registry()
      collectDefaultMetrics({ register })
      const labelNames = ['method', 'route', 'status_code'] as const
      const name = 'http_request_duration_seconds'
      return new Histogram({ name, help: 'Requests.', labelNames, registers: [register] })
    })()
/** Records a request that began at `startedAt` (performance.now()) under its route's label. */
export function observe (method: string, route: string, status: number, startedAt: number): void {
  durations?.observe({ method, route, status_code: status }, (performance.now() - startedAt) / 1000)
}

const validatorOf = createValidatorCompiler()
const serializerOf = createSerializerCompiler()
/** The part's validator for the contract's schema: the value, checked (and for a query coerced), or 400. */
function validator<T> (schema: unknown, httpPart: 'body' | 'querystring', method: string, url: string) {
  const validate = validatorOf({ schema, httpPart, method, url }) as ValidateFunction
  return (data: unknown): T => {
    if (validate(data) !== true) throw formatSchemaErrors(validate.errors ?? [], httpPart)
    return data as T
  }
}
const serializer = (name: string) => serializerOf({ schema: schemaOf(name) })

const inviteBody = validator<{ email: string, role: 'member' | 'admin' }>(
  schemaOf('InviteUserRequest'), 'body', 'POST', '/api/users/invite'
)
const listQueryOf = validator<Parameters<typeof listQuery>[0]>(
  listQuerySchema, 'querystring', 'GET', '/api/invitations'
)
const serialize = {
  health: serializer('Health'),
  invite: serializer('InviteUserResponse'),
  list: serializer('InvitationList'),
  error: serializer('ErrorResponse')
}
const ok = (body: string): Answer => ({ status: 200, headers: JSON_HEADERS, body })

/** The session cookie if this service signed it and it has not expired, else 401: before the body is read. */
export function sessionToken (cookieHeader: string | undefined): string {
  const cookies = cookieHeader === undefined || cookieHeader === '' ? {} : base.parseCookie(cookieHeader)
  const token = cookies[SESSION_COOKIE]
  if (token === undefined || token === '') throw serviceError('UNAUTHENTICATED')
  try { base.sessionSigner.verify(token) } catch { throw serviceError('UNAUTHENTICATED') }
  return token
}

/** The session row, then the admin role. */
async function adminSession (token: string, requestId: string): Promise<Principal> {
  const principal = await services.sessions.authenticate(token)
  if (principal === null) throw serviceError('UNAUTHENTICATED')
  if (principal.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
  return { ...principal, requestId }
}

/** A JSON body (any other media type: 415), parsed as the service parses one. */
async function jsonBody (contentType: string | undefined, read: () => Promise<Buffer>): Promise<unknown> {
  if (contentType?.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
    throw serviceError('UNSUPPORTED_MEDIA_TYPE')
  }
  return parseJsonBody(await read())
}

export async function healthAnswer (): Promise<Answer> {
  return ok(serialize.health(await health()))
}

/** POST /api/users/invite after `sessionToken`: the body, its validation, the session, the invitation. */
export async function invite (
  token: string, requestId: string, contentType: string | undefined, read: () => Promise<Buffer>
): Promise<Answer> {
  const body = inviteBody(await jsonBody(contentType, read))
  const admin = await adminSession(token, requestId)
  return ok(serialize.invite(await services.invitations.invite(admin, body)))
}

/** GET /api/invitations after `sessionToken`: the query, its validation, the session, the page. */
export async function list (token: string, requestId: string, query: Record<string, unknown>): Promise<Answer> {
  const q = listQueryOf(query)
  const admin = await adminSession(token, requestId)
  return ok(serialize.list(await services.invitations.list(admin, listQuery(q))))
}

/**
 * @fastify/rate-limit's local store, by hand: a count per key in a window of `windowMs` from its
 * first request; answers the milliseconds left of a window whose count is past `max`, else 0.
 */
function fixedWindow (max: number, windowMs: number): (key: string) => number {
  const windows = new Map<string, { count: number, endsAt: number }>()
  return key => {
    const now = Date.now()
    let w = windows.get(key)
    if (w === undefined || w.endsAt <= now) windows.set(key, w = { count: 0, endsAt: now + windowMs })
    w.count++
    return w.count > max ? w.endsAt - now : 0
  }
}
const perKey = fixedWindow(config.rateLimit.apiKeyPerMinute, 60_000)

/** POST /api/mcp's door: the API key, then its rate limit (429); past both, 503 (no MCP server here). */
export async function mcp (authorization: string | undefined): Promise<Answer> {
  const secret = bearer(authorization)
  const principal = secret === null ? null : await services.security.authenticateApiKey(secret)
  if (principal === null) throw serviceError('UNAUTHENTICATED')
  const waitMs = perKey(`key:${principal.apiKeyId ?? ''}`)
  if (waitMs > 0) {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000))
    const refused = serviceError('RATE_LIMITED', [seconds])
    refused.headers = {
      'x-ratelimit-limit': String(config.rateLimit.apiKeyPerMinute),
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(seconds),
      'retry-after': String(seconds)
    }
    throw refused
  }
  return { status: 503, headers: JSON_HEADERS, body: serialize.error(errorBody(serviceError('SERVICE_UNAVAILABLE'))) }
}

/** Anything a route threw, as the error handler answers it (5xx logged). */
export function failure (err: unknown, log: Logger): Answer {
  const { error } = toServiceError(err)
  if (error.statusCode >= 500) log.error({ err }, error.message)
  const headers = error.headers === undefined ? JSON_HEADERS : { ...JSON_HEADERS, ...error.headers }
  return { status: error.statusCode, headers, body: serialize.error(errorBody(error)) }
}

/** A path no route serves. */
export function notFound (method: string, path: string): Answer {
  return failure(serviceError('NOT_FOUND', [`${method} ${path}`]), rootLogger)
}
