import { createRequire } from 'node:module'
import fp from 'fastify-plugin'
import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import { Redis } from 'ioredis'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, onRequestHookHandler, RouteOptions } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'

// Per-operation policy declared in the contract (x-fastify-config) and applied here:
//  - order of checks. Operations behind the sessionCookie scheme check in two steps: the token
//    (present, signed by us, not expired) in onRequest, before the body is read, so a caller
//    without a session gets 401 (not 400/415) and costs no parsing; the session row and the role
//    (401 revoked, 403 not admin) after validation, in glue's preHandler, so a malformed request
//    is refused without a database round trip. API-key operations authenticate fully in
//    onRequest: every request with a key counts against its rate limit, valid or not.
//    Operations whose security needs the raw body (Slack's signature) say `authAfterBody: true`.
//  - `rateLimit: { scope }` names a policy; the numbers come from configuration. Operations
//    without one (everything behind a session cookie) are not limited.
//  - the invitation-e-mail budget is not a route policy: the invitation service draws on it
//    (`invitationBudget`, decorated here on the same store) whoever sends — REST, MCP, the chat
//    bot — and only when it is about to send, so refused requests and replays do not count.
//
// Store: memory (one instance) or Redis (REDIS_URL, shared by every instance). When Redis fails:
//  - RATE_LIMIT_FAIL_OPEN=true (default): requests are counted in this instance's memory until
//    Redis answers again, so limits still hold per instance (N instances: at most N × the limit)
//    and an outage of Redis never takes the API down. Logged once per outage.
//  - RATE_LIMIT_FAIL_OPEN=false: limited operations answer 500 INTERNAL_ERROR until Redis is back.

export type RateLimitScope = 'client-ip' | 'api-key'

interface RouteConfig { rateLimit?: { scope?: RateLimitScope } | false, authAfterBody?: boolean }

function rateLimitFor (scope: RateLimitScope, config: Config) {
  switch (scope) {
    case 'client-ip':
      // request.ip honours TRUST_PROXY: a spoofed X-Forwarded-For from an untrusted peer is ignored.
      return { max: config.rateLimit.authPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `ip:${r.ip}` }
    case 'api-key':
      // Authentication ran first (onRequest), so the key is known; a request without one got 401.
      return { max: config.rateLimit.apiKeyPerMinute, timeWindow: 60_000, keyGenerator: (r: FastifyRequest) => `key:${r.principal?.apiKeyId ?? 'none:' + r.ip}` }
  }
}

export interface RoutePolicyOptions {
  config: Config
  /** The parsed contract: each operation's security requirements decide the order of checks. */
  contract: Record<string, unknown>
  /** The token half of the sessionCookie scheme (see createSessionPrecheck). */
  sessionPrecheck: onRequestHookHandler
  /** Injected by tests to share one Redis client; otherwise created from REDIS_URL. */
  redis?: Redis
}

/** The per-workspace invitation-e-mail budget (INVITE_EMAILS_PER_HOUR), in the rate-limit store. */
export interface InvitationBudget {
  /** Draws one e-mail from the workspace's hourly budget; throws RATE_LIMITED (with Retry-After) when it is spent. */
  take(workspaceId: string): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimitStore: 'memory' | 'redis'
    invitationBudget: InvitationBudget
  }
}

// The plugin's own stores (CommonJS, no type declarations of their own).
type StoreCallback = (error: Error | null, result?: { current: number, ttl: number }) => void
type Store = FastifyRateLimitStore & { read?: (key: string, cb: StoreCallback, timeWindow: number, max: number) => void }
const require = createRequire(import.meta.url)
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, nameSpace: string) => Store
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => Store

const NAMESPACE = 'workspace-service:rl:'

/** Logs a Redis outage once when it starts and once when it ends, not on every failed call. */
function outageLog (log: FastifyBaseLogger) {
  let down = false
  return {
    failed (err: Error) {
      if (down) return
      down = true
      log.warn({ err: err.message }, 'rate-limit store (Redis) unavailable')
    },
    ok () {
      if (!down) return
      down = false
      log.info('rate-limit store (Redis) available again')
    }
  }
}

/** Redis first; on an error the same call goes to this instance's memory store (fail-open). */
class FailOpenStore implements Store {
  constructor (private readonly redis: Store, private readonly local: Store, private readonly health: ReturnType<typeof outageLog>) {}

  incr (key: string, cb: StoreCallback, timeWindow: number, max: number): void {
    this.redis.incr(key, (err, res) => {
      if (err === null || err === undefined) {
        this.health.ok()
        cb(null, res)
        return
      }
      this.health.failed(err)
      this.local.incr(key, cb, timeWindow, max)
    }, timeWindow, max)
  }

  read (key: string, cb: StoreCallback, timeWindow: number, max: number): void {
    const fallback = () => { (this.local.read as NonNullable<Store['read']>)(key, cb, timeWindow, max) }
    if (this.redis.read === undefined) { fallback(); return }
    this.redis.read(key, (err, res) => { if (err === null || err === undefined) cb(null, res); else fallback() }, timeWindow, max)
  }

  child (routeOptions: Parameters<Store['child']>[0]): Store {
    return new FailOpenStore(this.redis.child(routeOptions), this.local.child(routeOptions), this.health)
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

/** "GET /api/users/:userId" → the scheme names of each alternative security requirement. */
function securityByRoute (contract: Record<string, unknown>): Map<string, string[][]> {
  const global = (contract.security ?? []) as Array<Record<string, unknown>>
  const out = new Map<string, string[][]>()
  for (const [path, item] of Object.entries((contract.paths ?? {}) as Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>)) {
    const url = path.replace(/\{([^}]+)\}/g, ':$1')
    for (const [method, op] of Object.entries(item)) {
      out.set(`${method.toUpperCase()} ${url}`, (op.security ?? global).map(req => Object.keys(req)))
    }
  }
  return out
}

async function routePolicyPlugin (fastify: FastifyInstance, opts: RoutePolicyOptions): Promise<void> {
  const { config } = opts
  const security = securityByRoute(opts.contract)
  fastify.addHook('onRoute', (route: RouteOptions) => {
    const cfg = (route.config ?? {}) as RouteConfig
    // HEAD routes Fastify adds for GET operations follow their GET's policy.
    const method = route.method === 'HEAD' ? 'GET' : String(route.method)
    const requirements = security.get(`${method} ${route.url}`) ?? []
    const sessionOnly = requirements.length > 0 && requirements.every(r => r.length === 1 && r[0] === 'sessionCookie')
    // glue puts the security check in preHandler; nothing else has set one at this point.
    if (typeof route.preHandler === 'function' && cfg.authAfterBody !== true) {
      if (sessionOnly) {
        route.onRequest = [opts.sessionPrecheck, ...[route.onRequest ?? []].flat()]
      } else {
        route.onRequest = [route.preHandler as unknown as onRequestHookHandler, ...[route.onRequest ?? []].flat()]
        delete route.preHandler
      }
    }
    if (cfg.rateLimit !== undefined && cfg.rateLimit !== false && cfg.rateLimit.scope !== undefined) {
      // A fresh object: glue hands every instance the same parsed contract. The rate-limit hook
      // is appended after the authentication hook, so it sees request.principal.
      route.config = { ...cfg, rateLimit: { ...rateLimitFor(cfg.rateLimit.scope, config), hook: 'onRequest' } }
    }
  })

  let redis: Redis | undefined = opts.redis
  const health = outageLog(fastify.log)
  if (redis === undefined && config.rateLimit.redisUrl !== null) {
    const owned = new Redis(config.rateLimit.redisUrl, {
      // Bounded: a Redis outage must not hold requests (no offline queue: a call fails at once
      // while disconnected; a hung server fails the call after commandTimeout).
      connectTimeout: 1000,
      commandTimeout: 500,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      retryStrategy: times => Math.min(times * 200, 5000)
    })
    owned.on('error', (err: Error) => { health.failed(err) })
    owned.on('ready', () => { health.ok() })
    fastify.addHook('onClose', async () => { owned.disconnect() })
    await firstConnection(owned, 1000)
    redis = owned
  }
  fastify.decorate('rateLimitStore', redis !== undefined ? 'redis' : 'memory')
  fastify.log.info({ store: fastify.rateLimitStore, failOpen: config.rateLimit.failOpen }, 'rate-limit store')

  const shared = redis
  const storeIn = (nameSpace: string): Store => {
    if (shared === undefined) return new LocalStore(false, false)
    const remote = new RedisStore(false, false, shared, nameSpace)
    return config.rateLimit.failOpen ? new FailOpenStore(remote, new LocalStore(false, false), health) : remote
  }
  // @fastify/rate-limit constructs the store itself; a class whose constructor returns ours.
  const store = class { constructor () { return storeIn(NAMESPACE) } } as unknown as new () => Store

  await fastify.register(rateLimit, {
    global: false,
    store,
    // Fail-closed: a store error reaches the error handler as a (masked) 500.
    skipOnError: false,
    errorResponseBuilder: (_req, ctx) => serviceError('RATE_LIMITED', [Math.max(1, Math.ceil(ctx.ttl / 1000))])
  })

  // Same store, same outage policy; its 429 carries the headers the rate-limit hook would set.
  const budget = storeIn(`${NAMESPACE}invitation-emails:`)
  const max = config.inviteEmailsPerHour
  fastify.decorate('invitationBudget', {
    async take (workspaceId: string): Promise<void> {
      const res = await new Promise<{ current: number, ttl: number }>((resolve, reject) => {
        budget.incr(workspaceId, (err, r) => { if (err !== null && err !== undefined) reject(err); else resolve(r ?? { current: 0, ttl: 0 }) }, 3_600_000, max)
      })
      if (res.current <= max) return
      const seconds = Math.max(1, Math.ceil(res.ttl / 1000))
      const err = serviceError('RATE_LIMITED', [seconds])
      err.headers = { 'retry-after': String(seconds), 'x-ratelimit-limit': String(max), 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(seconds) }
      throw err
    }
  })
}

export default fp(routePolicyPlugin, { name: 'route-policy', fastify: '5.x' })
