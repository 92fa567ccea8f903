import fp from 'fastify-plugin'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { keepIdleConnectionsOnClose } from '../lib/workarounds/idle-connections-kept.js'

// Draining before a shutdown, so a restart behind a load balancer drops no request. On SIGTERM
// (src/server.ts) the service first drains for SHUTDOWN_DRAIN_MS: it goes on serving, but every
// answer carries `Connection: close`, so each keep-alive connection a proxy holds is closed by
// us right after an answer instead of sitting idle, and GET/HEAD /api/health answer 503 so a
// proxy that checks health stops routing here. Only then does it stop listening. A connection
// the kernel completed and queued before that, unaccepted, is reset by the close when the socket
// is the process's own, its request unread (nginx retries no POST or PATCH it had sent): no drain
// can prevent that (test/ops/accept-queue.test.ts). Hence the deployment of docs/operating.md
// holds each instance's socket in systemd (src/config/listen-socket.ts), where such a connection
// waits for the next process; on a socket of its own, a connection opened after the close is
// refused, which nginx passes to another instance.
//
// Nor does it close a kept-alive connection under a peer that may be sending on it. Node's
// server.close() destroys at once every connection with no request in progress: one whose
// request reached the kernel an instant before, unread yet, is destroyed with it unread, and the
// kernel answers that with a reset — a request the proxy had sent, which it retries for no PATCH
// or POST (issue 45 item 9; test/ops/close-race.test.ts makes that instant). So once the listener
// is closed the connections still open stay served (each answer closing its connection), their
// peers close the idle ones (a proxy within its keep-alive timeout, shorter than the drain), and
// only those still idle the drain's length later are closed by us.

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
  /** How long idle connections are left to their peers once the listener is closed: the drain's. */
  let idleGraceMs = 0
  fastify.decorate('draining', () => since !== null)
  fastify.decorate('drain', async (ms: number) => {
    since ??= Date.now()
    idleGraceMs = Math.max(idleGraceMs, ms)
    const left = since + ms - Date.now()
    if (left > 0) await sleep(left)
  })
  // Node's server.close() would close idle connections at once: src/lib/workarounds/ says why not.
  keepIdleConnectionsOnClose(fastify.server, () => idleGraceMs)
  // A callback hook (not async): every answer passes here, and a promise each for a flag is waste.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (since !== null) reply.header('connection', 'close')
    done(null, payload)
  })
}

export default fp(drainPlugin, { name: 'drain', fastify: '5.x' })
