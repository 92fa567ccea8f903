import { STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { serviceError } from '../errors.js'
import { errorBody, loggedServiceError } from '../error-response.js'
import type { ServiceError } from '../errors.js'

export { errorBody, formatSchemaErrors } from '../error-response.js'

// The one error handler and the one not-found handler. Every non-2xx answer, from a handler,
// a security check or Fastify itself, leaves here as an ErrorResponse with a registry code.

/**
 * Fastify's clientErrorHandler: a request Node's HTTP parser refuses before Fastify sees it (an
 * unknown method such as `FOO`, a malformed request line, headers over the size limit, a request
 * timeout) still gets an ErrorResponse, written as raw HTTP on the socket (there is no reply),
 * with the security headers every other answer carries.
 */
export function createClientErrorHandler (headers: Record<string, string>) {
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}`)
  return function clientErrorHandler (
    this: { log: FastifyInstance['log'] },
    err: NodeJS.ErrnoException,
    socket: Duplex
  ): void {
    if (err.code === 'ECONNRESET' || socket.destroyed) return
    const [status, why] = err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'the request took too long to arrive']
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? [
            431, 'the request headers are too large'
          ]
        : [400, 'it is not valid HTTP/1.1']
    const error = serviceError('VALIDATION_FAILED', [why])
    this.log.debug({ err: err.message, code: err.code }, 'client error')
    if (socket.writable) {
      const body = JSON.stringify(errorBody(error))
      socket.write([
        `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
        'Content-Type: application/json; charset=utf-8',
        ...extra,
        `Content-Length: ${Buffer.byteLength(body)}`,
        'Connection: close',
        '',
        body
      ].join('\r\n'))
    }
    socket.destroy()
  }
}

/** How an error looks on the wire: JSON's ErrorResponse here, SCIM's own under its base paths (src/routes/). */
export interface ErrorShape {
  readonly type: string
  body(error: ServiceError): unknown
}

const JSON_ERRORS: ErrorShape = { type: 'application/json; charset=utf-8', body: errorBody }

/** The error handler of a context whose errors take `shape`. */
export function errorHandlerOf (fastify: FastifyInstance, shape: ErrorShape) {
  return async (err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const bodyLimit = request.routeOptions.bodyLimit ?? fastify.initialConfig.bodyLimit ?? 1048576
    const error = loggedServiceError(err, request.log, bodyLimit)
    // Browser flows (e.g. the Slack install link) send a person without a session to /login.
    const redirect = (request.routeOptions.config as {
      unauthenticatedRedirect?: string
    } | undefined)?.unauthenticatedRedirect
    if (redirect !== undefined && error.statusCode === 401) {
      return await reply.redirect(redirect, 302)
    }
    if (error.headers !== undefined) reply.headers(error.headers)
    return await reply.code(error.statusCode).type(shape.type).send(shape.body(error))
  }
}

/** The not-found handler of a context whose errors take `shape`. */
export function notFoundHandlerOf (shape: ErrorShape) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/'
    const error = serviceError('NOT_FOUND', [`${request.method} ${path}`])
    return await reply.code(404).type(shape.type).send(shape.body(error))
  }
}

async function errorsPlugin (fastify: FastifyInstance): Promise<void> {
  fastify.setErrorHandler(errorHandlerOf(fastify, JSON_ERRORS))

  // A path the contract does not list, or a method it does not list on that path (HEAD included:
  // exposeHeadRoutes is off), is 404: only what the contract declares is answered.
  // The router matches `/api/users/` to `/api/users/{userId}` with an empty userId; the contract
  // has no such path, so it is answered as one it does not list (not as a malformed parameter).
  // A callback hook (no promise, no array of the values), first of the route's own onRequest
  // hooks (before its security check) and only on the routes with path parameters: the others,
  // /api/health among them, run no hook for it.
  const noEmptyParams: onRequestHookHandler = (request, reply, done) => {
    const params = request.params as Record<string, unknown> | undefined
    for (const name in params) {
      if (params[name] === '') {
        reply.callNotFound() // answers; a callback hook that answered does not call done()
        return
      }
    }
    done()
  }
  fastify.addHook('onRoute', route => {
    if (route.url.includes(':') || route.url.includes('*')) {
      route.onRequest = [noEmptyParams, ...[route.onRequest ?? []].flat()]
    }
  })
  fastify.setNotFoundHandler(notFoundHandlerOf(JSON_ERRORS))
}

export default fp(errorsPlugin, { name: 'errors', fastify: '5.x' })
