import type { HandlerGroup } from './types.js'
import type { HandlerDeps } from './index.js'

export function healthHandlers ({ services, config }: HandlerDeps): HandlerGroup<'getHealth'> {
  const { db } = services.ports
  // Concurrent health checks share one database round trip: a load balancer polling hard costs
  // one ping per round trip, not one per request, and no answer is ever stale.
  let inFlight: Promise<void> | null = null
  const ping = async (): Promise<void> => {
    inFlight ??= withTimeout(db.ping(), 2000).finally(() => { inFlight = null })
    await inFlight
  }
  return {
    async getHealth (request, reply) {
      const started = performance.now()
      try {
        await ping()
      } catch (err) {
        request.log.warn({ err: (err as Error).message }, 'health: database unavailable')
        // Same shape as 200 plus the ErrorResponse fields, so both kinds of client can read it.
        return await reply.code(503).send({
          message: 'The service is unavailable: the database does not answer',
          code: 'SERVICE_UNAVAILABLE',
          status: 'unavailable',
          version: config.version,
          checks: { database: { status: 'unavailable', kind: db.kind } }
        })
      }
      const latencyMs = Math.round((performance.now() - started) * 100) / 100
      return { status: 'ok', version: config.version, checks: { database: { status: 'ok', kind: db.kind, latencyMs } } }
    }
  }
}

async function withTimeout<T> (p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([p, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`timed out after ${ms} ms`)) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}
