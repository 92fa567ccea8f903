import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import Fastify, {
  type FastifyHttpOptions, type FastifyInstance, type FastifyReply, type FastifyServerOptions,
  type RouteOptions
} from 'fastify'
import glue from 'fastify-openapi-glue'
import type { Config } from './config.js'
import { systemClock, type Clock } from './clock.js'
import type { Database } from './db/client.js'
import { tracedMailer } from './mail/mailer.js'
import type { Mailer } from './ports/mailer.js'
import { openAppDatabase, openAppMailer } from './adapters.js'
import { registerBodyParsing } from './body-parsing.js'
import { loggerOptions, prettyLogs, RequestLogController } from './logger.js'
import { readContractFile } from './contract-file.js'
import { createSerializerCompiler, createValidatorCompiler } from './validation.js'
import { serviceError } from './errors.js'
import { answerOverCap, capConnections } from './connection-caps.js'
import errors, { createClientErrorHandler, errorBody, formatSchemaErrors } from './plugins/errors.js'
import { isScimUrl, SCIM_MEDIA_TYPE, scimErrorBody } from './scim/errors.js'
import { authTokens } from './plugins/auth.js'
import redis from './plugins/redis.js'
import rateLimit from './plugins/rate-limit.js'
import security from './plugins/security.js'
import securityHeadersPlugin, { securityHeaders } from './plugins/helmet.js'
import metrics from './plugins/metrics.js'
import loadShedding from './plugins/load-shedding.js'
import drain from './plugins/drain.js'
import contractLifecycle, { contractVersion, readDeprecations } from './plugins/contract-lifecycle.js'
import { observeDatabase } from './db/observed.js'
import { createInvitationBudget } from './invitations/budget.js'
import { createServices, type Services } from './services.js'
import { noopTracer, type Tracer } from './lib/telemetry.js'
import { createRetentionSweep, type RetentionSweep } from './housekeeping/retention.js'
import { createHandlers } from '../handlers/index.js'
import type { Redis } from 'ioredis'
import { lookup as dnsLookup } from 'node:dns'
import type { LookupFunction } from 'node:net'
import { startJobEngine } from './jobs/engine.js'
import { createEventOutbox } from './events/outbox.js'
import { createDnsResolver } from './domains/resolver.js'
import type { Resolver } from './ports/index.js'

export interface AppOptions {
  config: Config
  /** Overrides for tests: the same program, other peers. */
  clock?: Clock
  db?: Database
  mailer?: Mailer
  redis?: Redis
  /** Name resolution for outgoing webhooks (tests make a name resolve to what they need). */
  lookup?: LookupFunction
  /** TXT lookups for domain verification (default: node:dns on DNS_SERVERS). */
  resolver?: Resolver
  /** Spans for SQL statements and SMTP sends (src/tracing.ts, when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  tracer?: Tracer
  /** pino options or false; defaults to the configured level. */
  logger?: boolean | Record<string, unknown>
  /**
   * The contract to serve instead of openapi.yaml (tests: a copy with an edit, e.g. an operation
   * deprecated). Its operationIds must be those handlers/ implements.
   */
  contract?: Record<string, unknown>
}

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
    db: Database
    services: Services
    /** Deletes dead rows on an interval; tests call sweep() directly. */
    retention: RetentionSweep
    /** The contract, parsed once (served at /api/openapi.json). */
    contract: Record<string, unknown>
    /** Starts the bounce listener (BOUNCE_SMTP_PORT) as src/server.ts does; its URL, or null when it is off. */
    listenBounces(): Promise<string | null>
  }
}

/**
 * The contract as an object: a fresh deep copy per app (glue may annotate what it is given).
 * Compiled by `npm run build`, read once per process and version of the file (src/contract-file.ts).
 */
export function loadContract (): Record<string, unknown> {
  return structuredClone(readContractFile().doc)
}

/** Server options shared by production and tests: a test instance must be the same program. */
function serverOptions (
  config: Config, logger: AppOptions['logger'], apiHeaders: Record<string, string>
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

/** Build the app: plugins, then fastify-openapi-glue binding openapi.yaml to handlers/. Nothing listens. */
export async function buildApp (opts: AppOptions): Promise<FastifyInstance> {
  const { config } = opts
  const clock = opts.clock ?? systemClock
  // A fresh copy for each user: glue may annotate what it is given.
  const contractCopy = () => opts.contract !== undefined ? structuredClone(opts.contract) : loadContract()
  const contract = contractCopy()
  // Before anything is opened: a deprecation the contract does not date refuses to start.
  const deprecations = readDeprecations(contract, config.publicUrl)
  // API-Version (contract-lifecycle.ts) on every API answer.
  const apiHeaders = { 'api-version': contractVersion(contract) }
  const app = Fastify(serverOptions(config, opts.logger, apiHeaders))
  capConnections(app.server, { ...config.connections, ipv6Prefix: config.rateLimit.ipv6Prefix }, app.log)
  // First of all hooks: a request on a connection past a cap is answered 503 and the connection closed.
  app.addHook('onRequest', answerOverCap)
  app.setValidatorCompiler(createValidatorCompiler())
  app.setSerializerCompiler(createSerializerCompiler())
  app.decorate('config', config)

  // Every answer's fixed headers, a set per kind of answer (src/plugins/helmet.ts).
  await app.register(securityHeadersPlugin, { config, apiHeaders })
  await app.register(errors)
  // First of the onRequest hooks: an overloaded service refuses before doing any work.
  await app.register(loadShedding, { config })
  await app.register(drain)

  registerBodyParsing(app)

  const rawDb = await openAppDatabase(app, config, opts.db)
  await app.register(metrics, { config, poolStats: () => rawDb.poolStats() })
  // Statements are observed (a span each, failed ones counted) only when traces or metrics are on.
  const db = opts.tracer !== undefined || config.metrics.port !== null
    ? observeDatabase(rawDb, { meter: app.meter, tracer: opts.tracer ?? noopTracer })
    : rawDb
  app.decorate('db', db)

  const baseMailer = openAppMailer(app, config, opts.mailer)
  const mailer = opts.tracer !== undefined ? tracedMailer(baseMailer, opts.tracer) : baseMailer

  await app.register(authTokens, { config, clock })
  // Registered before glue, so @fastify/rate-limit's onRoute hook sees the contract's routes.
  await app.register(redis, { config, ...(opts.redis !== undefined ? { redis: opts.redis } : {}) })
  await app.register(rateLimit, { config })
  const invitationBudget = createInvitationBudget(
    app.windowCounter('invitation-emails:'),
    config.inviteEmailsPerHour,
    () => { app.meter.rateLimitRefusal('invitation-emails') }
  )
  const jobs = await startJobEngine({
    db,
    log: app.log,
    schema: config.jobs.schema,
    pollSeconds: config.jobs.pollMs / 1000,
    // A job is taken as dead (its worker crashed) well after the longest attempt could last: a
    // webhook delivery, or a reminder's e-mail.
    expireSeconds: 2 * Math.ceil(Math.max(config.webhooks.timeoutMs, config.smtp.timeoutMs) / 1000) + 5,
    maintenanceSeconds: config.jobs.maintenanceSeconds,
    workers: true
  })
  const services = createServices({
    config,
    db,
    clock,
    mailer,
    log: app.log,
    signer: app.sessionSigner,
    invitationBudget,
    jobs,
    events: createEventOutbox(jobs),
    lookup: opts.lookup ?? dnsLookup,
    resolver: opts.resolver ?? createDnsResolver(config.dns),
    meter: app.meter
  })
  app.decorate('services', services)
  // The DSN listener is started by src/server.ts once the API listens; closing stops taking
  // bounces first (in-flight messages finish) while the database is still open.
  app.decorate('listenBounces', async () => await services.bounces.listener.listen())
  app.addHook('preClose', async () => { await services.bounces.listener.close() })
  app.addHook('onClose', async () => { await services.close() })
  // Workers start once the app is ready and stop before the database closes.
  app.addHook('onReady', async () => { await services.startWorkers() })
  app.addHook('preClose', async () => { await jobs.stop() })
  const retention = createRetentionSweep({ db, clock, log: app.log, config })
  app.decorate('retention', retention)
  app.addHook('onReady', async () => { retention.start() })
  app.addHook('onClose', async () => { await retention.stop() })

  app.decorate('contract', contract)
  await app.register(security, { contract, security: services.security, publicUrl: config.publicUrl })
  await app.register(contractLifecycle, { deprecations })

  const handlers = createHandlers({ services, config, contract }) as Record<string, (...args: never[]) => unknown>
  await app.register(glue, {
    specification: contractCopy(),
    // Each route gets its handler and, from the contract, its security hooks and rate limit.
    // glue merges these into the route it builds (docs/operationResolver.md); its type declares
    // a complete RouteOptions, method and url included, which glue itself supplies.
    operationResolver: (operationId: string, method: string, openapiPath: string) => {
      const route = app.operationRoute(method, openapiPath)
      // The contract's path template names the route in metrics and traces (never the raw URL).
      route.config.contractPath = openapiPath
      const deprecation = app.deprecationRoute(method, openapiPath, operationId)
      return { handler: handlers[operationId]?.bind(handlers), ...route, ...deprecation } as unknown as RouteOptions
    }
  })
  return app
}
