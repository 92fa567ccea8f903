import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { normalizeIP } from '@fastify/rate-limit'
import type { Logger } from './logger.js'

// Bounds on open connections, so that one client holding idle sockets cannot use up the process's
// file descriptors and leave nobody else (a load balancer's health check included) a connection:
//  - MAX_CONNECTIONS: Node's server.maxConnections; past it a new connection is closed at once;
//  - MAX_CONNECTIONS_PER_ADDRESS: open connections from one peer address (IPv6 per
//    /RATE_LIMIT_IPV6_PREFIX network, as the rate limits count), past it a new one is closed at once.
// The peer is the TCP peer: behind a reverse proxy that is the proxy, so size the per-address cap
// above its connection pool there (or 0: off). Reaching a cap is logged, at most once a minute each.

export interface ConnectionCaps {
  /** 0: no global cap. */
  max: number
  /** 0: no per-address cap. */
  perAddress: number
  ipv6Prefix: number
}

const LOG_EVERY_MS = 60_000

export function capConnections (server: Server, caps: ConnectionCaps, log: Logger): void {
  let lastLogged = { global: 0, address: 0 }
  const logOnce = (which: 'global' | 'address', fields: Record<string, unknown>, msg: string): void => {
    const now = Date.now()
    if (now - lastLogged[which] < LOG_EVERY_MS) return
    lastLogged = { ...lastLogged, [which]: now }
    log.warn(fields, msg)
  }
  if (caps.max > 0) {
    server.maxConnections = caps.max
    server.on('drop', (data?: { remoteAddress?: string }) => {
      logOnce('global', { max: caps.max, remoteAddress: data?.remoteAddress },
        'connection cap reached (MAX_CONNECTIONS): new connections are closed until some end')
    })
  }
  if (caps.perAddress === 0) return
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = normalizeIP(socket.remoteAddress ?? '', caps.ipv6Prefix)
    const count = (open.get(address) ?? 0) + 1
    if (count > caps.perAddress) {
      logOnce('address', { perAddress: caps.perAddress, remoteAddress: address },
        'per-address connection cap reached (MAX_CONNECTIONS_PER_ADDRESS): the new connection is closed')
      socket.destroy()
      return
    }
    open.set(address, count)
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}
