import { readFileSync } from 'node:fs'
import { randomUUID } from 'node:crypto'
import type { Server } from 'node:http'
import Fastify, {
  type FastifyHttpOptions, type FastifyInstance, type FastifyReply, type FastifyServerOptions,
  type preValidationAsyncHookHandler, type RouteOptions
} from 'fastify'
import glue from 'fastify-openapi-glue'
import { parse as parseYaml } from 'yaml'
import type { Config } from './config.js'
import { systemClock, type Clock } from './clock.js'
import { openDatabase, type Database } from './db/client.js'
import { migrate } from './db/migrate.js'
import { createMailer, tracedMailer, type Mailer } from './mail/mailer.js'
import { deferChildLoggers, loggerOptions, prettyLogs } from './logger.js'
import { contractPath } from './paths.js'
import { createSerializerCompiler, createValidatorCompiler } from './validation.js'
import { serviceError } from './errors.js'
import { parseJsonBody } from './json-body.js'
import errors, { createClientErrorHandler, errorBody, formatSchemaErrors } from './plugins/errors.js'
import { authTokens } from './plugins/auth.js'
import redis from './plugins/redis.js'
import rateLimit from './plugins/rate-limit.js'
import security from './plugins/security.js'
import securityHeadersPlugin, { securityHeaders } from './plugins/helmet.js'
import metrics from './plugins/metrics.js'
import loadShedding from './plugins/load-shedding.js'
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

export interface AppOptions {
  config: Config
  /** Overrides for tests: the same program, other peers. */
  clock?: Clock
  db?: Database
  mailer?: Mailer
  redis?: Redis
  /** Name resolution for outgoing webhooks (tests make a name resolve to what they need). */
  lookup?: LookupFunction
  /** Spans for SQL statements and SMTP sends (src/tracing.ts, when OTEL_EXPORTER_OTLP_ENDPOINT is set). */
  tracer?: Tracer
  /** pino options or false; defaults to the configured level. */
  logger?: boolean | Record<string, unknown>
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
  }
}

let cachedContract: { text: string, doc: Record<string, unknown> } | undefined

/** The contract as an object: a fresh deep copy per app (glue may annotate what it is given). */
export function loadContract (): Record<string, unknown> {
  const text = readFileSync(contractPath, 'utf8')
  if (cachedContract?.text !== text) cachedContract = { text, doc: parseYaml(text) as Record<string, unknown> }
  return structuredClone(cachedContract.doc)
}

/** Server options shared by production and tests: a test instance must be the same program. */
function serverOptions (config: Config, logger: AppOptions['logger']): FastifyHttpOptions<Server> {
  return {
    logger: (
      logger ?? loggerOptions(config.logLevel, { pretty: prettyLogs(config.logFormat, process.stdout) })
    ) as NonNullable<FastifyServerOptions['logger']>,
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
      // No hook has run for it (no route matched), so the security headers are set here.
      ;(reply as unknown as FastifyReply).code(400).headers(securityHeaders(config, request.protocol === 'https'))
        .type('application/json; charset=utf-8').send(errorBody(err))
    },
    // What Node's HTTP parser refuses (an unknown method, a bad request line) is an ErrorResponse too.
    clientErrorHandler: createClientErrorHandler(securityHeaders(config)),
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
  const app = Fastify(serverOptions(config, opts.logger))
  deferChildLoggers(app)
  app.setValidatorCompiler(createValidatorCompiler())
  app.setSerializerCompiler(createSerializerCompiler())
  app.decorate('config', config)

  await app.register(securityHeadersPlugin, { config })
  await app.register(errors)
  // First of the onRequest hooks: an overloaded service refuses before doing any work.
  await app.register(loadShedding, { config })

  // Bodies: JSON only (text/plain is removed, so it gets 415 instead of skipping the schema).
  // Operations that need the raw bytes (Slack's signature) say `rawBody: true` in the contract.
  app.removeContentTypeParser(['application/json', 'text/plain'])
  // Operations without a request body in the contract ignore whatever body is sent, of any type;
  // operations with one accept JSON only (anything else: 415) and require it (absent: 400).
  const takesBody = (
    request: { routeOptions: { schema?: { body?: unknown } } }
  ) => request.routeOptions.schema?.body !== undefined
  app.addContentTypeParser('*', (request, _payload, done) => {
    done(takesBody(request) ? serviceError('UNSUPPORTED_MEDIA_TYPE') : null, undefined)
  })
  // Route by route, once, what would otherwise be worked out on every request:
  //  - "body is required" is a preValidation hook of the operations with a request body only
  //    (an operation without one runs no hook for it);
  //  - a status whose contract declares one media type, application/json, gets its serializer as
  //    the status's own (Fastify otherwise parses each reply's Content-Type to pick it by media type).
  const bodyRequired: preValidationAsyncHookHandler = async request => {
    if (request.body === undefined) {
      throw serviceError(
        'VALIDATION_FAILED', ['body is required'], { errors: [{ in: 'body', field: '', message: 'is required' }] }
      )
    }
  }
  app.addHook('onRoute', route => {
    if (route.schema?.body !== undefined) route.preValidation = [bodyRequired, ...[route.preValidation ?? []].flat()]
    type Answer = { content?: Record<string, { schema?: unknown }> }
    const response = route.schema?.response as Record<string, Answer> | undefined
    for (const [status, answer] of Object.entries(response ?? {})) {
      const types = Object.keys(answer.content ?? {})
      const json = answer.content?.['application/json']?.schema
      if (types.length === 1 && json !== undefined && response !== undefined) response[status] = json as never
    }
  })
  const routeConfig = (request: { routeOptions: { config: unknown } }) =>
    (request.routeOptions.config ?? {}) as { rawBody?: boolean, formBody?: boolean }
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    if (!takesBody(request)) {
      done(null, undefined)
      return
    }
    // Form operations (Slack's commands and interactions) take their one media type only.
    if (routeConfig(request).formBody === true) {
      done(serviceError('UNSUPPORTED_MEDIA_TYPE'), undefined)
      return
    }
    if (routeConfig(request).rawBody === true) {
      request.rawBody = body as Buffer
    }
    let parsed: unknown
    try {
      parsed = parseJsonBody(body as Buffer)
    } catch (err) {
      done(err as Error, undefined)
      return
    }
    done(null, parsed)
  })
  // Form bodies only for the operations whose contract says `formBody: true` (Slack posts its
  // commands and interactions so); elsewhere a form is 415, so a cross-site HTML form cannot
  // drive a JSON operation. Fields become strings (a repeated field: its last value).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (request, body, done) => {
    if (!takesBody(request) || routeConfig(request).formBody !== true) {
      done(takesBody(request) ? serviceError('UNSUPPORTED_MEDIA_TYPE') : null, undefined)
      return
    }
    if (routeConfig(request).rawBody === true) request.rawBody = body as Buffer
    done(null, Object.fromEntries(new URLSearchParams((body as Buffer).toString('utf8'))))
  })
  app.decorateRequest('rawBody', null)
  // Response-only media types in the contract: glue warns unless a parser is registered by name.
  for (const type of ['text/html', 'text/event-stream', 'application/javascript']) {
    app.addContentTypeParser(type, (request, _payload, done) => {
      done(takesBody(request) ? serviceError('UNSUPPORTED_MEDIA_TYPE') : null, undefined)
    })
  }

  const rawDb = opts.db ?? await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    ...config.databaseTimeouts,
    onError: err => { app.log.warn({ err: err.message }, 'database connection lost; the pool will reconnect') }
  })
  if (opts.db === undefined) {
    app.addHook('onClose', async () => { await rawDb.close() })
    await migrate(rawDb, { log: msg => { app.log.info(msg) } })
  }
  await app.register(metrics, { config, poolStats: () => rawDb.poolStats() })
  // Statements are observed (a span each, failed ones counted) only when traces or metrics are on.
  const db = opts.tracer !== undefined || config.metrics.port !== null
    ? observeDatabase(rawDb, { meter: app.meter, tracer: opts.tracer ?? noopTracer })
    : rawDb
  app.decorate('db', db)

  const baseMailer = opts.mailer ?? createMailer({
    smtpUrl: config.smtp.url,
    from: config.smtp.from,
    timeoutMs: config.smtp.timeoutMs,
    dataDir: config.dataDir,
    log: app.log
  })
  if (opts.mailer === undefined) app.addHook('onClose', async () => { await baseMailer.close() })
  const mailer = opts.tracer !== undefined ? tracedMailer(baseMailer, opts.tracer) : baseMailer

  await app.register(authTokens, { config })
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
    // A job is taken as dead (its worker crashed) well after the longest attempt could last.
    expireSeconds: 2 * Math.ceil(config.webhooks.timeoutMs / 1000) + 5,
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
    meter: app.meter
  })
  app.decorate('services', services)
  app.addHook('onClose', async () => { await services.close() })
  // Workers start once the app is ready and stop before the database closes.
  app.addHook('onReady', async () => { await services.startWorkers() })
  app.addHook('preClose', async () => { await jobs.stop() })
  const retention = createRetentionSweep({ db, clock, log: app.log, retention: config.retention })
  app.decorate('retention', retention)
  app.addHook('onReady', async () => { retention.start() })
  app.addHook('onClose', async () => { await retention.stop() })

  const contract = loadContract()
  app.decorate('contract', contract)
  await app.register(security, { contract, security: services.security })

  const handlers = createHandlers({ services, config, contract }) as Record<string, (...args: never[]) => unknown>
  await app.register(glue, {
    specification: loadContract(),
    // Each route gets its handler and, from the contract, its security hooks and rate limit.
    // glue merges these into the route it builds (docs/operationResolver.md); its type declares
    // a complete RouteOptions, method and url included, which glue itself supplies.
    operationResolver: (operationId: string, method: string, openapiPath: string) => {
      const route = app.operationRoute(method, openapiPath)
      // The contract's path template names the route in metrics and traces (never the raw URL).
      route.config.contractPath = openapiPath
      return { handler: handlers[operationId]?.bind(handlers), ...route } as unknown as RouteOptions
    }
  })
  return app
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The body's bytes, only for operations whose contract config says `rawBody: true`. */
    rawBody: Buffer | null
  }
}
