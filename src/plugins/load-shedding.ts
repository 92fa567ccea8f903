import fp from 'fastify-plugin'
import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'
import { OVERLOADED } from '../health/service.js'
import { reportsLoad } from '../http/route-config.js'

// Load shedding, when LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS is set, by @fastify/under-pressure: while
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
    retryAfter: retryAfterSeconds,
    // Called only while under pressure. Nothing returned lets the request through; a rejection
    // goes to the one error handler, which sets the error's headers.
    pressureHandler: async request => {
      if (reportsLoad(request)) return
      const err = serviceError('SERVICE_UNAVAILABLE', [OVERLOADED])
      err.headers = { 'retry-after': String(retryAfterSeconds) }
      throw err
    }
  })
  // One object per sample (a new delay, a new object): /api/health keeps its answer while it stays.
  let delay = 0
  let status: LoadStatus = { overloaded: false, eventLoopDelayMs: 0, retryAfterSeconds }
  fastify.decorate('loadStatus', () => {
    const { eventLoopDelay } = fastify.memoryUsage()
    if (eventLoopDelay !== delay) {
      delay = eventLoopDelay
      status = {
        overloaded: fastify.isUnderPressure(),
        // Infinity: no turn of the loop in a whole interval, so it was late by at least that much.
        eventLoopDelayMs: Number.isFinite(delay) ? Math.round(delay * 100) / 100 : sampleIntervalMs,
        retryAfterSeconds
      }
    }
    return status
  })
}

export default fp(loadSheddingPlugin, { name: 'load-shedding', fastify: '5.x' })
