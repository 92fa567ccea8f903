import type { Redis } from 'ioredis'
import { serviceError, type ServiceError } from '../errors.js'

// Fixed-window counters: the one mechanism behind the rate limits (through @fastify/rate-limit's
// store) and the invitation-e-mail budget. A window starts with the first count of a key and
// lasts `windowMs`; `add` with a negative amount gives counts back (never below zero, and never
// creates a window).

export interface WindowCount {
  /** The count in the current window, after this call. */
  current: number
  /** Milliseconds until the window ends (0 when there is none). */
  ttl: number
}

/** The port: a store of counters per key, in memory or shared (Redis). */
export interface WindowCounter {
  add(key: string, amount: number, windowMs: number): Promise<WindowCount>
}

/** One instance's memory. Old windows are dropped as they are met, and the oldest beyond `maxKeys`. */
export class MemoryWindowCounter implements WindowCounter {
  readonly #windows = new Map<string, { count: number, endsAt: number }>()

  constructor (private readonly maxKeys = 10_000, private readonly now: () => number = Date.now) {}

  async add (key: string, amount: number, windowMs: number): Promise<WindowCount> {
    const now = this.now()
    let w = this.#windows.get(key)
    if (w !== undefined && w.endsAt <= now) {
      this.#windows.delete(key)
      w = undefined
    }
    if (w === undefined) {
      if (amount <= 0) return { current: 0, ttl: 0 }
      w = { count: 0, endsAt: now + windowMs }
      if (this.#windows.size >= this.maxKeys) this.#windows.delete(this.#windows.keys().next().value as string)
      this.#windows.set(key, w)
    }
    w.count = Math.max(0, w.count + amount)
    return { current: w.count, ttl: w.endsAt - now }
  }
}

// One round trip, atomic: count, start the window on the first count, report what is left of it.
const ADD = `
local amount = tonumber(ARGV[1])
if amount <= 0 and redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
local current = redis.call('INCRBY', KEYS[1], amount)
if current < 0 then
  redis.call('SET', KEYS[1], 0, 'KEEPTTL')
  current = 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  ttl = tonumber(ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return {current, ttl}
`

type RedisWithAdd = Redis & {
  windowCounterAdd(key: string, amount: number, windowMs: number): Promise<[number, number]>
}

/** Shared by every instance: one counter per key in Redis, under `namespace`. */
export class RedisWindowCounter implements WindowCounter {
  readonly #redis: RedisWithAdd

  constructor (redis: Redis, private readonly namespace: string) {
    if (!('windowCounterAdd' in redis)) redis.defineCommand('windowCounterAdd', { numberOfKeys: 1, lua: ADD })
    this.#redis = redis as RedisWithAdd
  }

  async add (key: string, amount: number, windowMs: number): Promise<WindowCount> {
    let answer: [number, number]
    try {
      answer = await this.#redis.windowCounterAdd(this.namespace + key, amount, windowMs)
    } catch (err) {
      // An outage of the shared store is not the caller's fault: 503 with Retry-After (fail-closed),
      // or, behind FailOpenWindowCounter, the signal to count in memory instead.
      throw storeUnavailable(err)
    }
    const [current, ttl] = answer
    return { current, ttl }
  }
}

/** Reports an outage of the shared store once when it starts and once when it ends. */
export interface OutageLog {
  failed(err: Error): void
  ok(): void
}

/**
 * Fail-open: the shared counter first; when it fails, the same call goes to this instance's
 * memory, so limits still hold per instance and an outage of Redis never takes the API down.
 */
export class FailOpenWindowCounter implements WindowCounter {
  constructor (
    private readonly shared: WindowCounter,
    private readonly local: WindowCounter,
    private readonly outage: OutageLog
  ) {}

  async add (key: string, amount: number, windowMs: number): Promise<WindowCount> {
    try {
      const res = await this.shared.add(key, amount, windowMs)
      this.outage.ok()
      return res
    } catch (err) {
      this.outage.failed(err as Error)
      return await this.local.add(key, amount, windowMs)
    }
  }
}

/** RATE_LIMITED for a spent window, with the headers @fastify/rate-limit sets on its own 429s. */
/** Seconds a client should wait after the shared rate-limit store did not answer. */
const STORE_RETRY_AFTER_SECONDS = 5

function storeUnavailable (cause: unknown): ServiceError {
  const err = serviceError('SERVICE_UNAVAILABLE', ['the rate-limit store does not answer; retry shortly'])
  err.cause = cause
  err.headers = { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) }
  return err
}

export function windowSpent (max: number, ttlMs: number): ServiceError {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000))
  const err = serviceError('RATE_LIMITED', [seconds])
  err.headers = {
    'retry-after': String(seconds),
    'x-ratelimit-limit': String(max),
    'x-ratelimit-remaining': '0',
    'x-ratelimit-reset': String(seconds)
  }
  return err
}
