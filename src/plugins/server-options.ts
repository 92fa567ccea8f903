import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import type { FastifyHttpOptions, FastifyReply, FastifyServerOptions } from 'fastify'
import type { Config } from '../config.js'
import { loggerOptions, prettyLogs, RequestLogController } from '../logger.js'
import { serviceError } from '../errors.js'
import { createClientErrorHandler, errorBody, formatSchemaErrors } from './errors.js'
import { securityHeaders } from './helmet.js'
import { isScimUrl, SCIM_MEDIA_TYPE, scimErrorBody } from '../scim/errors.js'

// Fastify's own options for the service: what is decided when the instance is made, before any
// plugin (the logger, the proxy trust, timeouts, what the router and Node's parser refuse).

/** Server options shared by production and tests: a test instance must be the same program. */
export function serverOptions (
  config: Config, logger: boolean | Record<string, unknown> | undefined, apiHeaders: Record<string, string>
): FastifyHttpOptions<Server> {
  return {
    logger: (
      logger ?? loggerOptions(config.logLevel, {
        pretty: prettyLogs(config.logFormat, process.stdout), terminal: process.stdout.isTTY
      })
    ) as NonNullable<FastifyServerOptions['logger']>,
    // Per-request info lines only while info is on (src/logger.ts).
    logController: new RequestLogController(),
    trustProxy: config.trustProxy as NonNullable<FastifyServerOptions['trustProxy']>,
    bodyLimit: config.bodyLimit,
    onProtoPoisoning: 'error' as const,
    onConstructorPoisoning: 'error' as const,
    schemaErrorFormatter: formatSchemaErrors as NonNullable<FastifyServerOptions['schemaErrorFormatter']>,
    genReqId: () => randomUUID(),
    requestIdHeader: false as const,
    // During shutdown, requests already on open connections are served to the end (the server
    // stops accepting new connections); nothing is answered with a framework-default 503.
    return503OnClosing: false,
    // Router-level refusals (a path parameter over maxParamLength, a malformed URL) leave as a
    // contract ErrorResponse too: a 400 every operation with path parameters declares.
    frameworkErrors: (error, request, reply) => {
      const err = serviceError(
        'VALIDATION_FAILED',
        [error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL is malformed']
      )
      // No hook has run for it (no route matched), so the API's headers are set here.
      const scim = isScimUrl(request.url)
      ;(reply as unknown as FastifyReply).code(400)
        .headers(securityHeaders(config, 'api', request.protocol === 'https', apiHeaders))
        .type(scim ? SCIM_MEDIA_TYPE : 'application/json; charset=utf-8')
        .send(scim ? scimErrorBody(err) : errorBody(err))
    },
    // What Node's HTTP parser refuses (an unknown method, a bad request line) is an ErrorResponse too.
    clientErrorHandler: createClientErrorHandler(securityHeaders(config, 'api', false, apiHeaders)),
    // How long one plugin may take to start. The database plugin opens PGlite (initdb on a first
    // start) and runs the migrations: 2–7 s on an idle machine, 30–58 s seen at load 19
    // (docs/performance/2026-11-notes.md); Fastify's 10 s default failed starts under load. A
    // PostgreSQL that does not answer fails sooner, at DATABASE_CONNECT_TIMEOUT_MS.
    pluginTimeout: 120_000,
    // Only what the contract declares is answered: no implicit HEAD for every GET.
    exposeHeadRoutes: false,
    // Slow clients are bounded (HEADERS_/REQUEST_/CONNECTION_/KEEP_ALIVE_TIMEOUT_MS): the headers
    // and the whole request must arrive in time (else 408 and the connection is closed), a
    // connection silent for connectionTimeout is closed. Node checks the first two every
    // connectionsCheckingInterval (its 30 s default would let a trickling body live 30 s longer).
    connectionTimeout: config.timeouts.connection,
    keepAliveTimeout: config.timeouts.keepAlive,
    requestTimeout: config.timeouts.request,
    http: {
      headersTimeout: config.timeouts.headers,
      connectionsCheckingInterval: Math.min(1000, config.timeouts.headers)
    },
    // Keep-alive sockets are closed on shutdown so close() does not wait for idle clients.
    forceCloseConnections: 'idle' as const,
    routerOptions: { maxParamLength: 200 }
  }
}
