import type { FastifyReply, FastifyRequest } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import type { Config } from '../src/config.js'
import { serviceError } from '../src/errors.js'
import { OVERLOADED, type HealthService } from '../src/health/service.js'
import type { RelayState } from '../src/ports/mailer.js'

/** The checks besides the database's, as the request finds them. */
function otherChecks (request: FastifyRequest, health: HealthService) {
  // With load shedding on, the event loop is a check of its own; this operation is never
  // shed (contract: reportsLoad), it answers 503 saying so.
  const load = request.server.loadStatus()
  // Draining before a planned stop: not ready for new work, whatever the database says.
  const draining = request.server.draining()
  const relay = health.relay()
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
type Kind = HealthService['databaseKind']

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
  const { health } = services
  // The usual answer (the ping cached, nothing amiss) is one object while its parts stay the same:
  // made again when the latency, the relay's state or the event loop's sample (each a new object
  // on a change) moved.
  type Load = ReturnType<FastifyRequest['server']['loadStatus']>
  let usual: { latencyMs: number, relay: RelayState | undefined, load: Load, answer: Answer } | null = null
  const check = (request: FastifyRequest): Answer | Promise<Answer> => {
    const latency = health.ping()
    if (typeof latency === 'number' && usual?.latencyMs === latency && health.relay() === usual.relay &&
      request.server.loadStatus() === usual.load && !request.server.draining()) return usual.answer
    const found = otherChecks(request, health)
    if (typeof latency === 'number') {
      const a = answer(found, config, health.databaseKind, latency)
      if (a.code === 200) usual = { latencyMs: latency, relay: found.more.mail, load: found.load, answer: a }
      return a
    }
    return latency.then(ms => answer(found, config, health.databaseKind, ms), (err: unknown) => {
      request.log.warn({ err: (err as Error).message }, 'health: database unavailable')
      return unavailable(found, config, health.databaseKind)
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
