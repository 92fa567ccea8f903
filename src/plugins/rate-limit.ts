import fp from 'fastify-plugin'
import rateLimit, { normalizeIP, type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { serviceError } from '../errors.js'
import type { RateLimitScope as MeteredScope } from '../lib/telemetry.js'
import {
  FailOpenWindowCounter, MemoryWindowCounter, RedisWindowCounter, windowSpent, type WindowCounter
} from '../lib/window-counter.js'

// Rate limits: an operation names a policy in the contract (`x-fastify-config: { rateLimit:
// { scope } }`), the numbers come from configuration. Operations without one (everything behind
// a session cookie) are not limited.
//  - client-ip: every public operation that names it draws on ONE budget per client address
//    (AUTH_RATE_LIMIT_PER_MINUTE), not one per operation. IPv6 clients are keyed by their
//    /RATE_LIMIT_IPV6_PREFIX network (default /64: one subscriber's addresses), IPv4-mapped IPv6
//    as IPv4. request.ip honours TRUST_PROXY, so a spoofed X-Forwarded-For from an untrusted
//    peer is ignored.
//  - api-key: per key (API_KEY_RATE_LIMIT_PER_MINUTE), the MCP endpoint's. Authentication ran first
//    (onRequest), so the key is known; a request without one got 401. `countBodyItems: true` counts
//    a JSON array body (a JSON-RPC batch) once per item, after the body is read.
//  - api-key-only: per key, one budget shared by every REST operation open to keys
//    (API_KEY_REST_RATE_LIMIT_PER_MINUTE): API-key callers count, cookie callers of the same
//    operations are not limited (allowList).
//  - directory: per key, the SCIM operations under /scim/v2 (API_KEY_SCIM_RATE_LIMIT_PER_MINUTE). A
//    directory's first import is a lookup and a create per person, one by one: 50 people a second
//    is 6,000 requests a minute, all of the REST budget; a budget of its own lets it run at what the
//    service can serve while a script's key stays limited as before.
//  - failed bearer attempts: per client address (API_KEY_FAILURES_PER_MINUTE), see BearerFailures.
//
// Store: memory (one instance) or Redis (REDIS_URL, shared by every instance). When Redis fails:
//  - RATE_LIMIT_FAIL_OPEN=true (default): counted in this instance's memory until Redis answers
//    again (N instances: at most N × the limit); an outage of Redis never takes the API down.
//  - RATE_LIMIT_FAIL_OPEN=false: limited operations answer 503 SERVICE_UNAVAILABLE
//    (Retry-After) until Redis is back: an outage of a peer is never the caller's fault.

type RateLimitScope = Exclude<MeteredScope, 'invitation-emails' | 'api-key-failures'>

/** An operation's `x-fastify-config.rateLimit` in the contract. */
export interface RateLimitPolicy { scope: RateLimitScope, countBodyItems?: boolean }

interface RateLimitedRoute {
  /** @fastify/rate-limit's route config (its hook runs in onRequest, after authentication). */
  rateLimit: Record<string, unknown>
  /** Counts the rest of an array body, when the policy says so. */
  preHandler?: (request: FastifyRequest) => Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimitStore: 'memory' | 'redis'
    /** A counter in the rate-limit store (same outage policy), its keys under `namespace`. */
    windowCounter(namespace: string): WindowCounter
    /** What an operation's rate-limit policy adds to its route. */
    rateLimitedRoute(policy: RateLimitPolicy): RateLimitedRoute
    /** Failed bearer (API key) attempts per client address: API_KEY_FAILURES_PER_MINUTE. */
    bearerFailures: BearerFailures
  }
}

/**
 * Failed API-key attempts per client address. Each costs a database lookup, so past
 * API_KEY_FAILURES_PER_MINUTE failures in a minute that address's bearer attempts are refused
 * with 429 before any lookup, valid keys included, until the minute ends.
 */
export interface BearerFailures {
  /** Throws RATE_LIMITED when the request's address has used up its failures. */
  check(request: FastifyRequest): Promise<void>
  /** Counts one failure; the one that reaches the limit is logged. */
  record(request: FastifyRequest): Promise<void>
}

const NAMESPACE = 'workspace-service:rl:'
const MINUTE_MS = 60_000

/** @fastify/rate-limit's store over a window counter. */
class WindowCounterStore implements FastifyRateLimitStore {
  constructor (private readonly counter: WindowCounter) {}

  incr (
    key: string,
    callback: (error: Error | null, result?: { current: number, ttl: number }) => void,
    timeWindow: number
  ): void {
    this.counter.add(key, 1, timeWindow).then(res => { callback(null, res) }, (err: Error) => { callback(err) })
  }

  // Keys name their scope (`ip:…`, `key:…`), not the route: operations of one scope share a budget.
  child (): FastifyRateLimitStore {
    return this
  }
}

async function rateLimitPlugin (fastify: FastifyInstance, opts: { config: Config }): Promise<void> {
  const { config } = opts
  const redis = fastify.redis
  const counterIn = (namespace: string): WindowCounter => {
    if (redis === null) return new MemoryWindowCounter()
    const shared = new RedisWindowCounter(redis, NAMESPACE + namespace)
    return config.rateLimit.failOpen
      ? new FailOpenWindowCounter(
        shared, new MemoryWindowCounter(), fastify.redisOutage
      )
      : shared
  }
  fastify.decorate('rateLimitStore', redis !== null ? 'redis' : 'memory')
  fastify.decorate('windowCounter', counterIn)
  fastify.log.info({ store: fastify.rateLimitStore, failOpen: config.rateLimit.failOpen }, 'rate-limit store')

  const requests = counterIn('')
  const refusal = (_req: unknown, ctx: { ttl: number }) =>
    serviceError('RATE_LIMITED', [Math.max(1, Math.ceil(ctx.ttl / 1000))])
  await fastify.register(rateLimit, {
    global: false,
    store: class extends WindowCounterStore { constructor () { super(requests) } },
    // Fail-closed: a store error reaches the error handler as a (masked) 500.
    skipOnError: false,
    errorResponseBuilder: refusal
  })

  const scopes: Record<RateLimitScope, {
    max: number, key: (r: FastifyRequest) => string, skip?: (r: FastifyRequest) => boolean
  }> = {
    'client-ip': {
      max: config.rateLimit.authPerMinute,
      key: r => `ip:${normalizeIP(r.ip, config.rateLimit.ipv6Prefix)}`
    },
    'api-key': { max: config.rateLimit.apiKeyPerMinute, key: r => `key:${r.principal?.apiKeyId ?? 'none:' + r.ip}` },
    // The REST operations open to keys: a budget per key of its own, beside the MCP endpoint's;
    // only API-key callers count.
    'api-key-only': {
      max: config.rateLimit.apiKeyRestPerMinute,
      key: r => `rest:${r.principal?.apiKeyId ?? 'none:' + r.ip}`,
      skip: r => r.principal?.kind !== 'apiKey'
    },
    // SCIM is for keys only (scope scim): their requests there draw on this budget, not the REST one.
    directory: {
      max: config.rateLimit.apiKeyScimPerMinute,
      key: r => `scim:${r.principal?.apiKeyId ?? 'none:' + r.ip}`
    }
  }
  const failures = counterIn('bearer-failures:')
  const maxFailures = config.rateLimit.apiKeyFailuresPerMinute
  const addressOf = (r: FastifyRequest) => normalizeIP(r.ip, config.rateLimit.ipv6Prefix)
  fastify.decorate('bearerFailures', {
    async check (request) {
      const { current, ttl } = await failures.add(addressOf(request), 0, MINUTE_MS)
      if (current < maxFailures) return
      fastify.meter.rateLimitRefusal('api-key-failures')
      throw windowSpent(maxFailures, ttl)
    },
    async record (request) {
      const { current } = await failures.add(addressOf(request), 1, MINUTE_MS)
      if (current === maxFailures) {
        request.log.warn(
          { remoteAddress: addressOf(request), failures: current },
          'failed API-key attempts limit reached (API_KEY_FAILURES_PER_MINUTE): ' +
          'bearer attempts from this address refused for the rest of the minute'
        )
      }
    }
  } satisfies BearerFailures)
  fastify.decorate('rateLimitedRoute', (policy: RateLimitPolicy): RateLimitedRoute => {
    const { max, key, skip } = scopes[policy.scope]
    const refused = () => { fastify.meter.rateLimitRefusal(policy.scope) }
    const route: RateLimitedRoute = {
      rateLimit: {
        max,
        timeWindow: MINUTE_MS,
        keyGenerator: key,
        hook: 'onRequest',
        ...(skip !== undefined ? { allowList: (r: FastifyRequest) => skip(r) } : {}),
        errorResponseBuilder: (req: unknown, ctx: { ttl: number }) => {
          refused()
          return refusal(req, ctx)
        }
      }
    }
    if (policy.countBodyItems === true) {
      route.preHandler = async request => {
        // The request itself was counted in onRequest; each further item counts as one more.
        if (skip?.(request) === true) return
        if (!Array.isArray(request.body) || request.body.length < 2) return
        const { current, ttl } = await requests.add(key(request), request.body.length - 1, MINUTE_MS)
        if (current <= max) return
        refused()
        throw windowSpent(max, ttl)
      }
    }
    return route
  })
}

export default fp(rateLimitPlugin, { name: 'rate-limit', fastify: '5.x', dependencies: ['redis', 'metrics'] })
