import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import type { OutageLog } from '../lib/window-counter.js'

// The Redis client (REDIS_URL), when one is configured: bounded so that an outage never holds a
// request, its outages logged once each, closed with the app. Without REDIS_URL, `redis` is null.

declare module 'fastify' {
  interface FastifyInstance {
    redis: Redis | null
    /** Logs an outage of Redis once when it starts and once when it ends. */
    redisOutage: OutageLog
  }
}

interface RedisPluginOptions {
  config: Config
  /** Injected by tests to share one client; otherwise created from REDIS_URL. */
  redis?: Redis | undefined
}

function outageLog (log: FastifyBaseLogger): OutageLog {
  let down = false
  return {
    failed (err: Error) {
      if (down) return
      down = true
      log.warn({ err: err.message }, 'Redis unavailable')
    },
    ok () {
      if (!down) return
      down = false
      log.info('Redis available again')
    }
  }
}

/** Waits (bounded) for the first connection attempt, so the first requests do not race it. */
async function firstConnection (redis: Redis, ms: number): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>(resolve => {
    const done = () => {
      clearTimeout(timer)
      redis.off('ready', done)
      redis.off('error', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    redis.once('ready', done)
    redis.once('error', done)
  })
}

async function redisPlugin (fastify: FastifyInstance, opts: RedisPluginOptions): Promise<void> {
  const outage = outageLog(fastify.log)
  fastify.decorate('redisOutage', outage)
  const url = opts.config.rateLimit.redisUrl
  if (opts.redis !== undefined || url === null) {
    fastify.decorate('redis', opts.redis ?? null)
    return
  }
  // Loaded only with REDIS_URL (39 modules a single instance never uses).
  const { Redis } = await import('ioredis')
  const client = new Redis(url, {
    // No offline queue: a call fails at once while disconnected; a hung server fails the call
    // after commandTimeout.
    connectTimeout: 1000,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    retryStrategy: times => Math.min(times * 200, 5000)
  })
  client.on('error', (err: Error) => { outage.failed(err) })
  client.on('ready', () => { outage.ok() })
  fastify.addHook('onClose', async () => { client.disconnect() })
  await firstConnection(client, 1000)
  fastify.decorate('redis', client)
}

export default fp(redisPlugin, { name: 'redis', fastify: '5.x' })
