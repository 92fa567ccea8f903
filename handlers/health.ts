import type { FastifyReply, FastifyRequest } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import type { Config } from '../src/config.js'
import { withDeadline } from '../src/lib/deadline.js'
import { serviceError } from '../src/errors.js'
import { OVERLOADED } from '../src/plugins/load-shedding.js'
import type { Mailer } from '../src/ports/mailer.js'

type RelayState = ReturnType<NonNullable<Mailer['relayState']>>

/** The checks besides the database's, as the request finds them. */
function otherChecks (request: FastifyRequest, mailer: Mailer) {
  // With load shedding on, the event loop is a check of its own; this operation is never
  // shed (contract: reportsLoad), it answers 503 saying so.
  const load = request.server.loadStatus()
  // Draining before a planned stop: not ready for new work, whatever the database says.
  const draining = request.server.draining()
  // The relay as last seen (at start, then by sends): never a connection from here.
  const relay = mailer.relayState?.()
  const more: {
    instance?: { status: 'draining' }
    eventLoop?: { status: 'ok' | 'overloaded', delayMs: number }
    mail?: RelayState
  } = {}
  if (draining) more.instance = { status: 'draining' }
  if (load !== null) more.eventLoop = { status: load.overloaded ? 'overloaded' : 'ok', delayMs: load.eventLoopDelayMs }
  if (relay !== undefined) more.mail = relay
  return { load, draining, more }
}
type Found = ReturnType<typeof otherChecks>
type Kind = HandlerDeps['services']['ports']['db']['kind']

/** Both methods' answer once the database answered: the status, the body GET sends, a 503's Retry-After seconds. */
function answer ({ load, draining, more }: Found, config: Config, kind: Kind, latencyMs: number) {
  const checks = { database: { status: 'ok' as const, kind, latencyMs }, ...more }
  if (load?.overloaded === true || draining) {
    return {
      code: 503 as const,
      retryAfter: load?.overloaded === true ? load.retryAfterSeconds : 1,
      body: {
        message: draining
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
}

/** The answer when the ping failed: the 200's shape plus the ErrorResponse fields, so both kinds of client read it. */
function unavailable ({ more }: Found, config: Config, kind: Kind) {
  return {
    code: 503 as const,
    retryAfter: null,
    body: {
      message: 'The service is unavailable: the database does not answer',
      code: 'SERVICE_UNAVAILABLE',
      status: 'unavailable' as const,
      version: config.version,
      checks: { database: { status: 'unavailable' as const, kind }, ...more }
    }
  }
}
type Answer = ReturnType<typeof answer> | ReturnType<typeof unavailable>

function retryAfter (a: Answer, reply: FastifyReply): void {
  if (a.code === 503 && a.retryAfter !== null) reply.header('retry-after', String(a.retryAfter))
}

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
  /** The database's latency in ms: a fresh cached one as it is (no promise, no await), else a ping's. */
  const ping = (): number | Promise<number> => {
    if (performance.now() < okUntil) return lastLatencyMs
    inFlight ??= (async () => {
      const started = performance.now()
      await withDeadline(db.ping(), 2000, 'database ping')
      const finished = performance.now()
      lastLatencyMs = Math.round((finished - started) * 100) / 100
      okUntil = finished + config.healthCacheMs
      return lastLatencyMs
    })().finally(() => { inFlight = null })
    return inFlight
  }
  const check = (request: FastifyRequest): Answer | Promise<Answer> => {
    const found = otherChecks(request, mailer)
    const latency = ping()
    if (typeof latency === 'number') return answer(found, config, db.kind, latency)
    return latency.then(ms => answer(found, config, db.kind, ms), (err: unknown) => {
      request.log.warn({ err: (err as Error).message }, 'health: database unavailable')
      return unavailable(found, config, db.kind)
    })
  }
  return {
    getHealth (request, reply) {
      const a = check(request)
      // The usual answer (a fresh ping, nothing amiss) is returned as it is: Fastify sends it at
      // once, with no promise and no turn of the microtask queue on the way.
      if (!(a instanceof Promise) && a.code === 200) return a.body
      return (async () => {
        const done = await a
        if (done.code === 200) return done.body
        retryAfter(done, reply)
        return await reply.code(503).send(done.body)
      })()
    },
    async headHealth (request, reply) {
      const a = await check(request)
      retryAfter(a, reply)
      return await reply.code(a.code).send()
    }
  }
}
