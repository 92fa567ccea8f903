import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { normalizeIP } from '@fastify/rate-limit'
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from './logger.js'
import { serviceError } from './errors.js'
import { reportsLoad } from './http/route-config.js'

// Bounds on open connections, so that one client holding idle sockets cannot use up the process's
// file descriptors and leave nobody else (a load balancer's health check included) a connection:
//  - MAX_CONNECTIONS: open connections in all;
//  - MAX_CONNECTIONS_PER_ADDRESS: open connections from one peer address (IPv6 per
//    /RATE_LIMIT_IPV6_PREFIX network, as the rate limits count).
// A connection past a cap gives its descriptor back at once: it is closed where it is accepted.
// Only a few at a time (REFUSING_AT_ONCE, in all) are kept to answer their request 503
// SERVICE_UNAVAILABLE with Retry-After (an idle one closed within a second, unanswered), so that
// an occasional client over a cap reads a 503 it retries rather than a closed connection (which a
// proxy in front turns into a 502). Kept for a second each, every connection past a cap held a
// descriptor: one address opening and re-opening idle connections then spent the process's
// descriptors, and everyone else's connections failed at accept (EMFILE).
// The peer is the TCP peer: behind a reverse proxy that is the proxy, so size the per-address cap
// above its connection pool there (or 0: off). Reaching a cap is logged, at most once a minute each.

interface ConnectionCaps {
  /** 0: no global cap. */
  max: number
  /** 0: no per-address cap. */
  perAddress: number
  ipv6Prefix: number
}

const LOG_EVERY_MS = 60_000

const REFUSED = Symbol('over a connection cap')
/** How long a connection past a cap may take to send its request (then it is closed unanswered). */
const REFUSED_GRACE_MS = 1000
/** Connections past a cap kept to be answered 503 at once; any more are closed at accept. */
const REFUSING_AT_ONCE = 16

/**
 * Whether this request's connection was opened past a cap: it is answered 503 with Retry-After
 * and `Connection: close` (an onRequest hook, below), never reset — a reverse proxy in front
 * would turn a reset into a 502.
 */
function overConnectionCap (socket: Socket): boolean {
  return (socket as Socket & { [REFUSED]?: boolean })[REFUSED] === true
}

/**
 * The app's first onRequest hook: a request on a connection past a cap is 503 SERVICE_UNAVAILABLE
 * with Retry-After and `Connection: close`. GET /api/health (reportsLoad) answers with its own
 * body, as under load shedding. A callback hook: every request passes here, and an async one
 * would cost each a promise and a turn of the microtask queue for one flag.
 */
function answerOverCap (request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void): void {
  if (!overConnectionCap(request.raw.socket) || reportsLoad(request)) {
    done()
    return
  }
  reply.header('connection', 'close')
  const err = serviceError('SERVICE_UNAVAILABLE', ['too many connections are open; retry shortly'])
  err.headers = { 'retry-after': '1' }
  done(err)
}

function capConnections (server: Server, caps: ConnectionCaps, log: Logger): void {
  let lastLogged = { global: 0, address: 0 }
  const logOnce = (which: 'global' | 'address', fields: Record<string, unknown>, msg: string): void => {
    const now = Date.now()
    if (now - lastLogged[which] < LOG_EVERY_MS) return
    lastLogged = { ...lastLogged, [which]: now }
    log.warn(fields, msg)
  }
  if (caps.max === 0 && caps.perAddress === 0) return
  let refusing = 0
  const refuse = (socket: Socket): void => {
    if (refusing >= REFUSING_AT_ONCE) {
      socket.destroy()
      return
    }
    refusing++
    socket.once('close', () => { refusing-- })
    Object.assign(socket, { [REFUSED]: true })
    // Its one request is answered 503 and the connection closed; an idle one does not stay.
    socket.setTimeout(REFUSED_GRACE_MS, () => { socket.destroy() })
  }
  let total = 0
  const open = new Map<string, number>()
  server.on('connection', (socket: Socket) => {
    const address = normalizeIP(socket.remoteAddress ?? '', caps.ipv6Prefix)
    if (caps.max > 0 && total >= caps.max) {
      logOnce('global', { max: caps.max, remoteAddress: address },
        'connection cap reached (MAX_CONNECTIONS): new connections are refused (503 or closed) until some end')
      refuse(socket)
      return
    }
    const count = (open.get(address) ?? 0) + 1
    if (caps.perAddress > 0 && count > caps.perAddress) {
      logOnce('address', { perAddress: caps.perAddress, remoteAddress: address },
        'per-address connection cap reached (MAX_CONNECTIONS_PER_ADDRESS): its new connections are refused')
      refuse(socket)
      return
    }
    total++
    open.set(address, count)
    socket.once('close', () => {
      total--
      const left = (open.get(address) ?? 1) - 1
      if (left === 0) open.delete(address)
      else open.set(address, left)
    })
  })
}

/** The caps on the app's server (MAX_CONNECTIONS…), and its first onRequest hook, which answers past them. */
async function connectionCaps (app: FastifyInstance): Promise<void> {
  const { connections, rateLimit } = app.config
  capConnections(app.server, { ...connections, ipv6Prefix: rateLimit.ipv6Prefix }, app.log)
  app.addHook('onRequest', answerOverCap)
}

export default fp(connectionCaps, { name: 'connection-caps', fastify: '5.x' })
