import type { HandlerDeps, HandlerGroup } from './types.js'
import { withDeadline } from '../src/lib/deadline.js'
import { serviceError } from '../src/errors.js'
import { OVERLOADED } from '../src/plugins/load-shedding.js'

export function healthHandlers ({ services, config }: HandlerDeps): HandlerGroup<'getHealth'> {
  const { db } = services.ports
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
  return {
    async getHealth (request, reply) {
      // With load shedding on, the event loop is a check of its own; this operation is never
      // shed (contract: reportsLoad), it answers 503 saying so.
      const load = request.server.loadStatus()
      const loopStatus = load?.overloaded === true ? 'overloaded' as const : 'ok' as const
      const eventLoop = load === null ? {} : { eventLoop: { status: loopStatus, delayMs: load.eventLoopDelayMs } }
      let latencyMs: number
      try {
        latencyMs = await ping()
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, 'health: database unavailable')
        // Same shape as 200 plus the ErrorResponse fields, so both kinds of client can read it.
        return await reply.code(503).send({
          message: 'The service is unavailable: the database does not answer',
          code: 'SERVICE_UNAVAILABLE',
          status: 'unavailable',
          version: config.version,
          checks: { database: { status: 'unavailable', kind: db.kind }, ...eventLoop }
        })
      }
      const checks = { database: { status: 'ok' as const, kind: db.kind, latencyMs }, ...eventLoop }
      if (load?.overloaded === true) {
        reply.header('retry-after', String(load.retryAfterSeconds))
        return await reply.code(503).send({
          message: serviceError('SERVICE_UNAVAILABLE', [OVERLOADED]).message,
          code: 'SERVICE_UNAVAILABLE',
          status: 'unavailable',
          version: config.version,
          checks
        })
      }
      return { status: 'ok', version: config.version, checks }
    }
  }
}
