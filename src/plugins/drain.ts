import fp from 'fastify-plugin'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'

// Draining before a shutdown, so a restart behind a load balancer drops no request. On SIGTERM
// (src/server.ts) the service first drains for SHUTDOWN_DRAIN_MS: it goes on serving, but every
// answer carries `Connection: close`, so each keep-alive connection a proxy holds is closed by
// us right after an answer instead of sitting idle, and GET/HEAD /api/health answer 503 so a
// proxy that checks health stops routing here. Only then does it stop listening: a connection
// the proxy then opens is refused before any byte of a request is sent, which nginx passes to
// another instance, POSTs included. Without the drain, closing idle keep-alive connections races
// a proxy that picks one at that instant; a POST lost that way cannot be retried by the proxy.

declare module 'fastify' {
  interface FastifyInstance {
    /** True from the start of a drain: health answers 503 and every answer closes its connection. */
    draining(): boolean
    /** Drains for `ms` (resolves at once for 0); idempotent. */
    drain(ms: number): Promise<void>
  }
}

async function drainPlugin (fastify: FastifyInstance): Promise<void> {
  let since: number | null = null
  fastify.decorate('draining', () => since !== null)
  fastify.decorate('drain', async (ms: number) => {
    since ??= Date.now()
    const left = since + ms - Date.now()
    if (left > 0) await sleep(left)
  })
  // A callback hook (not async): every answer passes here, and a promise each for a flag is waste.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (since !== null) reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(drainPlugin, { name: 'drain', fastify: '5.x' })
