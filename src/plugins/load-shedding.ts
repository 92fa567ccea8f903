import fp from 'fastify-plugin'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'
import { OVERLOADED } from '../health/service.js'
import { reportsLoad } from '../http/route-config.js'

// Load shedding, when LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS is set: while
// the event loop's mean delay over the last sample interval (LOAD_SHED_SAMPLE_INTERVAL_MS) is
// past the threshold, every request is answered at once with 503 SERVICE_UNAVAILABLE and
// Retry-After, through the one error handler, instead of joining a queue that only grows.
// The check runs first in onRequest: before authentication, before the body is read.
// Its own, not @fastify/under-pressure: that plugin reads request.routeOptions on every request
// (for a per-route handler) and process.memoryUsage() every interval, to check a delay alone.
// Operations marked `reportsLoad` in the contract (GET /api/health) are not shed: they answer
// with the overload in their own body, so a load balancer sees why it should look elsewhere.

interface LoadStatus {
  overloaded: boolean
  /** The mean event-loop delay of the last sample interval, in ms. */
  eventLoopDelayMs: number
  /** What a shed request is told to wait, in seconds. */
  retryAfterSeconds: number
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The event loop's state; null when load shedding is off (nothing is measured then). */
    loadStatus(): LoadStatus | null
  }
}

/** How often the event loop's delay is recorded (ms); the mean of an interval has this much taken off. */
const RESOLUTION_MS = 10

async function loadSheddingPlugin (fastify: FastifyInstance, opts: { config: Config }): Promise<void> {
  const { maxEventLoopDelayMs, sampleIntervalMs } = opts.config.loadShedding
  if (maxEventLoopDelayMs === 0) {
    fastify.decorate('loadStatus', () => null)
    return
  }
  // The state is re-sampled every interval: a client may come back after two of them.
  const retryAfterSeconds = Math.max(1, Math.ceil(2 * sampleIntervalMs / 1000))
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
  histogram.enable()
  // One object per sample, read as it is by every request and by /api/health until the next.
  let status: LoadStatus = { overloaded: false, eventLoopDelayMs: 0, retryAfterSeconds }
  const sample = (): void => {
    // No value in a whole interval (NaN): the loop never turned, so it was late by at least that much.
    const mean = histogram.mean / 1e6
    const delay = Number.isNaN(mean) ? Infinity : Math.max(0, mean - RESOLUTION_MS)
    histogram.reset()
    status = {
      overloaded: delay > maxEventLoopDelayMs,
      eventLoopDelayMs: Number.isFinite(delay) ? Math.round(delay * 100) / 100 : sampleIntervalMs,
      retryAfterSeconds
    }
    timer.refresh()
  }
  const timer = setTimeout(sample, sampleIntervalMs)
  timer.unref()
  fastify.addHook('onClose', (_instance, done) => {
    clearTimeout(timer)
    histogram.disable()
    done()
  })
  // A callback hook reading one flag: a request costs nothing more while the loop keeps up. The
  // route's config (request.routeOptions builds an object of twelve fields on each read) is read
  // only while shedding, to let a `reportsLoad` operation answer for itself.
  fastify.addHook('onRequest', (request, _reply, done) => {
    if (!status.overloaded || reportsLoad(request)) {
      done()
      return
    }
    const err = serviceError('SERVICE_UNAVAILABLE', [OVERLOADED])
    err.headers = { 'retry-after': String(retryAfterSeconds) }
    done(err)
  })
  fastify.decorate('loadStatus', () => status)
}

export default fp(loadSheddingPlugin, { name: 'load-shedding', fastify: '5.x' })
