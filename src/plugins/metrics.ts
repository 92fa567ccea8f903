import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fp from 'fastify-plugin'
import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { Config } from '../config.js'
import type { PoolStats } from '../db/client.js'
import { noopMeter, type Meter } from '../lib/telemetry.js'

// Prometheus metrics (prom-client), when METRICS_PORT is set: one registry per app instance (tests
// build many apps in one process), served as text at GET /metrics on a listener of its own, never
// on the API's port. buildApp only collects; src/server.ts starts the listener (listenMetrics).
// Without METRICS_PORT nothing is registered: no hook, no registry, the Meter is a no-op.

declare module 'fastify' {
  interface FastifyInstance {
    /** Counts what the domain and plugins report (a no-op without METRICS_PORT). */
    meter: Meter
    /** Starts the metrics listener on METRICS_HOST:METRICS_PORT; its URL, or null when metrics are off. */
    listenMetrics(): Promise<string | null>
  }
}

/** The route label of a request no contract operation matched: one value, whatever the URL. */
const UNMATCHED_ROUTE = 'unmatched'

interface MetricsOptions {
  config: Config
  /** The database pool, read at each scrape. */
  poolStats: () => PoolStats
}

function instruments (register: Registry, poolStats: () => PoolStats) {
  const registers = [register]
  collectDefaultMetrics({ register })
  const gauge = (name: string, help: string, read: (s: PoolStats) => number) => new Gauge({
    name, help, registers, collect () { this.set(read(poolStats())) }
  })
  gauge('database_pool_connections', 'Open database connections (PGlite: its one connection).', s => s.total)
  gauge('database_pool_idle_connections', 'Open database connections not in use.', s => s.idle)
  gauge('database_pool_waiting_clients', 'Callers waiting for a database connection.', s => s.waiting)
  return {
    // prom-client's default buckets, written out: what /metrics exposes does not move with it.
    requests: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'API requests by method, contract path template and status code.',
      labelNames: ['method', 'route', 'status_code'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers
    }),
    invitations: new Counter({
      name: 'workspace_invitations_total',
      help: 'Invitation deliveries by path (identity_provider, email) and outcome (sent, failed).',
      labelNames: ['path', 'outcome'] as const,
      registers
    }),
    refusals: new Counter({
      name: 'rate_limit_refusals_total',
      help: 'Requests refused by a rate limit or budget, by scope ' +
        '(client-ip, api-key, api-key-only, directory, invitation-emails, api-key-failures).',
      labelNames: ['scope'] as const,
      registers
    }),
    queryErrors: new Counter({
      name: 'database_query_errors_total',
      help: 'SQL statements that failed (constraint, timeout, lost connection …).',
      registers
    }),
    // Both labels come from openapi.yaml (an operationId; `operation` or the deprecated input's
    // name): as many series as the contract has deprecations, whatever the requests carry.
    deprecatedCalls: new Counter({
      name: 'api_deprecated_calls_total',
      help: 'Calls that used what the contract deprecates, by operationId and use ' +
        '(operation, query.<name>, header.<name>, body.<name>).',
      labelNames: ['operation_id', 'use'] as const,
      registers
    })
  }
}

async function metricsPlugin (fastify: FastifyInstance, opts: MetricsOptions): Promise<void> {
  const { port, host } = opts.config.metrics
  if (port === null) {
    fastify.decorate('meter', noopMeter)
    fastify.decorate('listenMetrics', async () => null)
    return
  }
  const register = new Registry()
  const m = instruments(register, opts.poolStats)
  fastify.decorate('meter', {
    invitationDelivery (path, outcome) { m.invitations.inc({ path, outcome }) },
    rateLimitRefusal (scope) { m.refusals.inc({ scope }) },
    databaseQueryError () { m.queryErrors.inc() },
    deprecatedCall (operationId, use) { m.deprecatedCalls.inc({ operation_id: operationId, use }) }
  } satisfies Meter)

  // The route label is the contract's path template (set on each route from openapi.yaml), never
  // the URL: one series per operation, whatever ids the paths carry. Each route's own hook holds
  // its label (request.routeOptions, read per request, builds an object of twelve fields each
  // time); what no route matched goes through the app's hook, which the not-found handler runs.
  // Callback hooks: no promise per request for one observation.
  const observeAs = (route: string): onResponseHookHandler => (request, reply, done) => {
    m.requests.observe({ method: request.method, route, status_code: reply.statusCode }, reply.elapsedTime / 1000)
    done()
  }
  fastify.addHook('onRoute', route => {
    const label = (route.config as { contractPath?: string } | undefined)?.contractPath ?? UNMATCHED_ROUTE
    route.onResponse = [...[route.onResponse ?? []].flat(), observeAs(label)]
  })
  const unmatched = observeAs(UNMATCHED_ROUTE)
  fastify.addHook('onResponse', function (request, reply, done) {
    if (request.is404) unmatched.call(this, request, reply, done)
    else done()
  })

  let server: Server | null = null
  fastify.decorate('listenMetrics', async () => {
    server ??= createServer((req, res) => {
      if (req.method !== 'GET' || req.url !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: GET /metrics\n')
        return
      }
      register.metrics().then(
        text => { res.writeHead(200, { 'content-type': register.contentType }).end(text) },
        (err: Error) => {
          fastify.log.error({ err }, 'metrics scrape failed')
          res.writeHead(500).end()
        }
      )
    })
    const listening = server
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject).listen(port, host, () => { resolve() })
    })
    const address = listening.address() as AddressInfo
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address
    return `http://${shown}:${address.port}/metrics`
  })
  fastify.addHook('onClose', async () => {
    if (server === null) return
    const closing = server
    const closed = new Promise<void>(resolve => { closing.close(() => { resolve() }) })
    // A scraper's keep-alive connection would hold close() open.
    closing.closeAllConnections()
    await closed
  })
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x' })
