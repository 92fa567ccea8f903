import type { FastifyRequest } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import { withDeadline } from '../src/lib/deadline.js'
import { serviceError } from '../src/errors.js'
import { OVERLOADED } from '../src/plugins/load-shedding.js'

export function healthHandlers ({ services, config }: HandlerDeps): HandlerGroup<'getHealth' | 'headHealth'> {
  const { db, mailer } = services.ports
  // A load balancer polling hard must not load the database: concurrent checks share one ping,
  // and a successful ping answers for HEALTH_CACHE_MS (default 1 s; 0: every check pings).
  // A failed ping is never reused: the next check pings again. On the embedded database the
  // ping runs on the request thread, so this is what keeps /api/health as cheap as a static
  // route there.
  let inFlight: Promise<number> | null = null
  let okUntil = 0
  let lastLatencyMs = 0
  const ping = async (): Promise<number> => {
    if (performance.now() < okUntil) return lastLatencyMs
    inFlight ??= (async () => {
      const started = performance.now()
      await withDeadline(db.ping(), 2000, 'database ping')
      const finished = performance.now()
      lastLatencyMs = Math.round((finished - started) * 100) / 100
      okUntil = finished + config.healthCacheMs
      return lastLatencyMs
    })().finally(() => { inFlight = null })
    return await inFlight
  }
  /** Both methods' answer: the status, the body GET sends, the Retry-After seconds of a 503. */
  const check = async (request: FastifyRequest) => {
    // With load shedding on, the event loop is a check of its own; this operation is never
    // shed (contract: reportsLoad), it answers 503 saying so.
    const load = request.server.loadStatus()
    const loopStatus = load?.overloaded === true ? 'overloaded' as const : 'ok' as const
    const eventLoop = load === null ? {} : { eventLoop: { status: loopStatus, delayMs: load.eventLoopDelayMs } }
    // The relay as last seen (at start, then by sends): never a connection from here.
    const relay = mailer.relayState?.()
    // Draining before a planned stop: not ready for new work, whatever the database says.
    const instance = request.server.draining() ? { instance: { status: 'draining' as const } } : {}
    const more = { ...instance, ...eventLoop, ...(relay === undefined ? {} : { mail: relay }) }
    try {
      const latencyMs = await ping()
      const checks = { database: { status: 'ok' as const, kind: db.kind, latencyMs }, ...more }
      if (load?.overloaded === true || 'instance' in instance) {
        return {
          code: 503 as const,
          retryAfter: load?.overloaded === true ? load.retryAfterSeconds : 1,
          body: {
            message: 'instance' in instance
              ? 'The service is unavailable: this instance is shutting down'
              : serviceError('SERVICE_UNAVAILABLE', [OVERLOADED]).message,
            code: 'SERVICE_UNAVAILABLE',
            status: 'unavailable' as const,
            version: config.version,
            checks
          }
        }
      }
      return { code: 200 as const, body: { status: 'ok' as const, version: config.version, checks } }
    } catch (err) {
      request.log.warn({ err: (err as Error).message }, 'health: database unavailable')
      // Same shape as 200 plus the ErrorResponse fields, so both kinds of client can read it.
      return {
        code: 503 as const,
        retryAfter: null,
        body: {
          message: 'The service is unavailable: the database does not answer',
          code: 'SERVICE_UNAVAILABLE',
          status: 'unavailable' as const,
          version: config.version,
          checks: { database: { status: 'unavailable' as const, kind: db.kind }, ...more }
        }
      }
    }
  }
  return {
    async getHealth (request, reply) {
      const answer = await check(request)
      if (answer.code === 200) return answer.body
      if (answer.retryAfter !== null) reply.header('retry-after', String(answer.retryAfter))
      return await reply.code(503).send(answer.body)
    },
    async headHealth (request, reply) {
      const answer = await check(request)
      if (answer.code === 503 && answer.retryAfter !== null) reply.header('retry-after', String(answer.retryAfter))
      return await reply.code(answer.code).send()
    }
  }
}
