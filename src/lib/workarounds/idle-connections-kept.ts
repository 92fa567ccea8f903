import type { Server } from 'node:http'

// A workaround inside Node's http.Server, kept because a documented target needs it: a rolling
// restart drops no request (docs/operating.md, "A real deployment"; test/ops/close-race.test.ts).
//
// Node's server.close() destroys at once every connection with no request in progress — and one
// whose request reached the kernel an instant before, unread yet, is destroyed with it unread: the
// kernel answers that with a reset, a request the proxy had sent, which it retries for no PATCH or
// POST (issue 45 item 9). Node offers no option to keep idle connections open through close():
// it calls the server's own closeIdleConnections() first of all (Node ≥ 19; Fastify calls it
// only with a serverFactory). So that method is replaced on the one server: during a drain, idle
// connections are left to their peers for the drain's length, and closed after it.
// test/ops/workarounds.test.ts fails when Node's close() stops calling the method.

/**
 * Makes `server.close()` close idle connections `graceMs()` later rather than at once (at once
 * when it is 0); the timer goes when the server closes.
 */
export function keepIdleConnectionsOnClose (server: Server, graceMs: () => number): void {
  const closeIdleNow = server.closeIdleConnections.bind(server)
  server.closeIdleConnections = () => {
    const ms = graceMs()
    if (ms === 0) { closeIdleNow(); return }
    const later = setTimeout(closeIdleNow, ms)
    server.once('close', () => { clearTimeout(later) })
  }
}
