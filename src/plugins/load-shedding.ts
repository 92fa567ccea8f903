import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'
import { OVERLOADED } from '../health/service.js'

// Load shedding (@fastify/under-pressure), when LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS is set: while
// the event loop's mean delay over the last sample interval (LOAD_SHED_SAMPLE_INTERVAL_MS) is
// past the threshold, every request is answered at once with 503 SERVICE_UNAVAILABLE and
// Retry-After, through the one error handler, instead of joining a queue that only grows.
// The check runs first in onRequest: before authentication, before the body is read.
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

async function loadSheddingPlugin (fastify: FastifyInstance, opts: { config: Config }): Promise<void> {
  const { maxEventLoopDelayMs, sampleIntervalMs } = opts.config.loadShedding
  if (maxEventLoopDelayMs === 0) {
    fastify.decorate('loadStatus', () => null)
    return
  }
  // The state is re-sampled every interval: a client may come back after two of them.
  const retryAfterSeconds = Math.max(1, Math.ceil(2 * sampleIntervalMs / 1000))
  await fastify.register(underPressure, {
    maxEventLoopDelay: maxEventLoopDelayMs,
    sampleInterval: sampleIntervalMs,
    // Async: a rejection reaches the error handler (a sync throw would escape the hook).
    pressureHandler: async (request: FastifyRequest) => {
      if ((request.routeOptions.config as { reportsLoad?: boolean } | undefined)?.reportsLoad === true) return
      const err = serviceError('SERVICE_UNAVAILABLE', [OVERLOADED])
      err.headers = { 'retry-after': String(retryAfterSeconds) }
      throw err
    }
  })
  fastify.decorate('loadStatus', () => {
    const { eventLoopDelay } = fastify.memoryUsage()
    return {
      overloaded: eventLoopDelay > maxEventLoopDelayMs,
      // Infinity: the loop never turned in a whole interval, so it was late by at least that much.
      eventLoopDelayMs: Number.isFinite(eventLoopDelay) ? Math.round(eventLoopDelay * 100) / 100 : sampleIntervalMs,
      retryAfterSeconds
    }
  })
}

export default fp(loadSheddingPlugin, { name: 'load-shedding', fastify: '5.x' })
