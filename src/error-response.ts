import type { FastifyError } from 'fastify'
import { isServiceError, serviceError, type ServiceError } from './errors.js'
import { isDatabaseUnavailable } from './db/client.js'

// Anything thrown → a registry error and the ErrorResponse body: pure functions of the registry
// (src/errors.ts), shared by the HTTP error handler (src/plugins/errors.ts) and the MCP door.

export interface ErrorBody { message: string, code: string, details?: Record<string, unknown> }

interface AjvLikeError { instancePath?: string, message?: string, keyword?: string, params?: Record<string, unknown> }

function fieldOf (e: AjvLikeError): string {
  const base = (e.instancePath ?? '').replace(/^\//, '').replaceAll('/', '.')
  const extra = e.params?.missingProperty ?? e.params?.additionalProperty
  if (typeof extra === 'string') return base === '' ? extra : `${base}.${extra}`
  return base
}

// `details.errors[].in` names where the failing value is with OpenAPI's parameter locations plus
// `body` (Fastify calls them querystring, params, headers); documented in ErrorResponse.
const LOCATION: Record<string, string> = { querystring: 'query', params: 'path', headers: 'header' }

/** Ajv's errors for one part of the request → VALIDATION_FAILED listing every failing field. */
function validationError (validation: AjvLikeError[], context: string): ServiceError {
  const part = LOCATION[context] ?? context
  const errors = validation.map(e => {
    const field = fieldOf(e)
    const message = e.keyword === 'additionalProperties'
      ? 'is not an allowed field'
      : (e.message ?? 'is invalid')
    return { in: part, field, message }
  })
  const summary = errors.map(e => `${e.in}${e.field === '' ? '' : '.' + e.field} ${e.message}`).join('; ')
  return serviceError('VALIDATION_FAILED', [summary], { errors })
}

/**
 * Fastify's schemaErrorFormatter: the registry error itself, built once. (Fastify's default
 * formats a message and captures a stack for every refused request; we would discard both.)
 */
export function formatSchemaErrors (validation: AjvLikeError[], dataVar: string): Error {
  return validationError(validation, dataVar)
}

/** Seconds a client should wait before retrying after a database outage (short: pools reconnect fast). */
const DATABASE_RETRY_AFTER_SECONDS = 5

/** 503 SERVICE_UNAVAILABLE with Retry-After: the database did not answer; the caller did nothing wrong. */
function databaseUnavailable (): ServiceError {
  const err = serviceError('SERVICE_UNAVAILABLE', ['the database does not answer; retry shortly'])
  err.headers = { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }
  return err
}

/**
 * What the error handler answers for `err`, logged as it logs it: an internal error (its cause,
 * never sent) and any 5xx at error, the rest at debug. For a handler that answers an error its own
 * way (a page for a browser) and must log it as the one handler would.
 */
interface ErrorLog { error: (o: object, m: string) => void, debug: (o: object, m: string) => void }

export function loggedServiceError (err: unknown, log: ErrorLog, bodyLimit?: number): ServiceError {
  const { error, internal } = toServiceError(err, bodyLimit)
  if (internal) log.error({ err }, 'request failed')
  else if (error.statusCode >= 500) log.error({ err }, error.message)
  else log.debug({ code: error.code }, error.message)
  return error
}

/** Map anything thrown to a registry error. Unknown errors become INTERNAL_ERROR (masked). */
export function toServiceError (err: unknown, bodyLimit?: number): { error: ServiceError, internal: boolean } {
  if (isServiceError(err)) return { error: err, internal: false }
  if (isDatabaseUnavailable(err)) return { error: databaseUnavailable(), internal: false }
  const e = err as FastifyError
  if (e.validation !== undefined) {
    return {
      error: validationError(e.validation as AjvLikeError[], e.validationContext ?? 'body'),
      internal: false
    }
  }
  switch (e.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': return { error: serviceError('UNSUPPORTED_MEDIA_TYPE'), internal: false }
    case 'FST_ERR_CTP_BODY_TOO_LARGE': return {
      error: serviceError('PAYLOAD_TOO_LARGE', [bodyLimit !== undefined ? String(bodyLimit) : 'the allowed number of']),
      internal: false
    }
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY': return { error: serviceError('INVALID_JSON'), internal: false }
  }
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500
  if (status >= 400 && status < 500) {
    // Other client errors from Fastify (bad Content-Length, aborted body, ...): keep the status,
    // use the registry code for it; Fastify's 4xx messages name no internals.
    const code = ({
      401: 'UNAUTHENTICATED',
      403: 'FORBIDDEN',
      404: 'NOT_FOUND',
      406: 'NOT_ACCEPTABLE',
      413: 'PAYLOAD_TOO_LARGE',
      415: 'UNSUPPORTED_MEDIA_TYPE',
      429: 'RATE_LIMITED'
    } as const)[status as 401] ?? 'VALIDATION_FAILED'
    const out = serviceError(code, ['request'])
    out.statusCode = status
    out.message = e.message
    return { error: out, internal: false }
  }
  const masked = status === 503
    ? serviceError(
      'SERVICE_UNAVAILABLE', ['try again later']
    )
    : serviceError('INTERNAL_ERROR')
  return { error: masked, internal: true }
}

export function errorBody (err: ServiceError): ErrorBody {
  const body: ErrorBody = { message: err.message, code: err.code }
  if (err.details !== undefined) body.details = err.details
  return body
}
