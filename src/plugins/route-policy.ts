import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import { Redis } from 'ioredis'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'

// Per-operation policy declared in the contract (x-fastify-config) and applied here:
//  - authentication runs in onRequest, before the body is read or validated, so a caller without
//    a session gets 401 (not 400/415) and costs no parsing. Operations whose security needs the
//    raw body (Slack's signature) say `authAfterBody: true` and keep glue's preHandler.
//  - `rateLimit: { scope }` names a policy; the numbers come from configuration.

export type RateLimitScope = 'client-ip' | 'api-key' | 'workspace-invitations'

interface RouteConfig { rateLimit?: { scope?: RateLimitScope } | false, authAfterBody?: boolean }

function rateLimitFor (scope: RateLimitScope, config: Config) {
  switch (scope) {
    case 'client-ip':
      // request.ip honours TRUST_PROXY: a spoofed X-Forwarded-For from an untrusted peer is ignored.
      return { max: config.rateLimit.authPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `ip:${r.ip}` }
    case 'api-key':
      return { max: config.rateLimit.apiKeyPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `key:${r.principal?.apiKeyId ?? 'none:' + r.ip}` }
    case 'workspace-invitations':
      return { max: config.inviteEmailsPerHour, timeWindow: 3_600_000, keyGenerator: (r: FastifyRequest) => `ws:${r.principal?.workspaceId ?? 'none:' + r.ip}` }
  }
}

export interface RoutePolicyOptions {
  config: Config
  /** Injected by tests to share one Redis client; otherwise created from REDIS_URL. */
  redis?: Redis
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimitStore: 'memory' | 'redis'
  }
}

async function routePolicyPlugin (fastify: FastifyInstance, opts: RoutePolicyOptions): Promise<void> {
  const { config } = opts
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const cfg = (route.config ?? {}) as RouteConfig
    // glue puts the security check in preHandler; nothing else has set one at this point.
    if (cfg.authAfterBody !== true && typeof route.preHandler === 'function') {
      const auth = route.preHandler as unknown as onRequestHookHandler
      route.onRequest = [auth, ...[route.onRequest ?? []].flat()]
      delete route.preHandler
    }
    if (cfg.rateLimit !== undefined && cfg.rateLimit !== false && cfg.rateLimit.scope !== undefined) {
      // A fresh object: glue hands every instance the same parsed contract.
      route.config = { ...cfg, rateLimit: { ...rateLimitFor(cfg.rateLimit.scope, config), hook: 'onRequest' } }
    }
  })

  let redis: Redis | undefined = opts.redis
  if (redis === undefined && config.rateLimit.redisUrl !== null) {
    redis = new Redis(config.rateLimit.redisUrl, {
      // Bounded: a Redis outage must not hold requests for long (see RATE_LIMIT_FAIL_OPEN).
      connectTimeout: 1000,
      commandTimeout: 500,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: false
    })
    redis.on('error', err => fastify.log.warn({ err: err.message }, 'rate-limit store (Redis) error'))
    const owned = redis
    fastify.addHook('onClose', async () => { owned.disconnect() })
  }
  fastify.decorate('rateLimitStore', redis !== undefined ? 'redis' : 'memory')

  await fastify.register(rateLimit, {
    global: false,
    ...(redis !== undefined ? { redis, nameSpace: 'workspace-service:rl:' } : {}),
    // Redis down: true = let requests through (logged), false = answer 500. See README.
    skipOnError: config.rateLimit.failOpen,
    errorResponseBuilder: (_req, ctx) => serviceError('RATE_LIMITED', [Math.max(1, Math.ceil(ctx.ttl / 1000))])
  })
}

export default fp(routePolicyPlugin, { name: 'route-policy', fastify: '5.x' })
