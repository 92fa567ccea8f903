import type t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from './contract.js'

/** A 429 as every rate limit answers it: RATE_LIMITED, Retry-After and x-ratelimit-* headers, per the contract. */
export function assertLimited (t: Tap, res: LightMyRequestResponse, method: string, url: string, limit: number): void {
  t.equal(res.statusCode, 429, 'limited')
  t.equal(res.json().code, 'RATE_LIMITED')
  t.match(res.json().message, /^Too many requests; retry in \d+ seconds$/)
  const retryAfter = Number(res.headers['retry-after'])
  t.ok(
    Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
    `Retry-After is 1..60 seconds (${String(res.headers['retry-after'])})`
  )
  t.equal(res.headers['x-ratelimit-limit'], String(limit))
  t.equal(res.headers['x-ratelimit-remaining'], '0')
  t.ok(Number(res.headers['x-ratelimit-reset']) >= 1, 'x-ratelimit-reset')
  assertContract(t, method, url, res)
}
type Tap = Pick<typeof t, 'equal' | 'match' | 'ok' | 'same'>
