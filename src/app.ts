import Fastify, { type FastifyInstance } from 'fastify'
import type { Redis } from 'ioredis'
import type { LookupFunction } from 'node:net'
import type { Config } from './config.js'
import { systemClock, type Clock } from './clock.js'
import type { Database } from './db/client.js'
import type { Mailer } from './ports/mailer.js'
import type { Resolver } from './ports/index.js'
import type { Tracer } from './lib/telemetry.js'
import { readContractFile } from './contract-file.js'
import { serverOptions } from './plugins/server-options.js'
import { createSerializerCompiler, createValidatorCompiler } from './validation.js'
import connectionCaps from './connection-caps.js'
import bodyParsing from './body-parsing.js'
import securityHeaders from './plugins/helmet.js'
import errors from './plugins/errors.js'
import loadShedding from './plugins/load-shedding.js'
import drain from './plugins/drain.js'
import metrics from './plugins/metrics.js'
import database from './plugins/database.js'
import mailer from './plugins/mailer.js'
import { authTokens } from './plugins/auth.js'
import redis from './plugins/redis.js'
import rateLimit from './plugins/rate-limit.js'
import jobs from './plugins/jobs.js'
import services from './plugins/services.js'
import housekeeping from './plugins/housekeeping.js'
import security from './plugins/security.js'
import contractLifecycle, { contractVersion, readDeprecations } from './plugins/contract-lifecycle.js'
import routes from './routes/index.js'

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
    /** The contract, parsed once (served at /api/openapi.json). */
    contract: Record<string, unknown>
  }
}

/**
 * The contract as an object: a fresh deep copy per app (glue may annotate what it is given).
 * Compiled by `npm run build`, read once per process and version of the file (src/contract-file.ts).
 */
export function loadContract (): Record<string, unknown> {
  return structuredClone(readContractFile().doc)
}

/**
 * Build the app: Fastify with the service's options, then its plugins in order — the edge (caps,
 * headers, errors, load, drain, bodies), the infrastructure (metrics, database, mail, tokens, Redis
 * and rate limits, jobs), the application (services, housekeeping), the contract's checks and the
 * routes. Each plugin names the ones it needs. Nothing listens (src/server.ts does).
 */
export async function buildApp (opts: AppOptions): Promise<FastifyInstance> {
  const { config, tracer } = opts
  const clock = opts.clock ?? systemClock
  const contract = opts.contract !== undefined ? structuredClone(opts.contract) : loadContract()
  // Before anything is opened: a deprecation the contract does not date refuses to start.
  const deprecations = readDeprecations(contract, config.publicUrl)
  const apiHeaders = { 'api-version': contractVersion(contract) }
  const app = Fastify(serverOptions(config, opts.logger, apiHeaders))
  app.setValidatorCompiler(createValidatorCompiler())
  app.setSerializerCompiler(createSerializerCompiler())
  app.decorate('config', config).decorate('contract', contract)
  await app.register(connectionCaps).register(securityHeaders, { config, apiHeaders }).register(errors)
  await app.register(loadShedding, { config }).register(drain).register(bodyParsing)
  await app.register(metrics, { config, poolStats: () => app.db.poolStats() })
  await app.register(database, { config, db: opts.db, tracer })
  await app.register(mailer, { config, mailer: opts.mailer, tracer })
  await app.register(authTokens, { config, clock }).register(redis, { config, redis: opts.redis })
  await app.register(rateLimit, { config }).register(jobs)
  await app.register(services, { clock, lookup: opts.lookup, resolver: opts.resolver })
  await app.register(housekeeping, { clock })
  await app.register(security).register(contractLifecycle, { deprecations }).register(routes)
  return app
}
