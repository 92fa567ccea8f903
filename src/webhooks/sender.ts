import http from 'node:http'
import https from 'node:https'
import type { AddressPolicy } from './address-policy.js'

// One HTTP attempt: POST the body, bounded by one deadline (connect, send, answer), through the
// address policy's lookup; redirects are not followed (a 3xx is a failed attempt). The answer's
// body is read and dropped: only its status and Retry-After matter.

export type AttemptOutcome =
  | { kind: 'answered', status: number, retryAfterMs: number | null }
  | { kind: 'failed', error: string }

/** Retry-After as seconds or an HTTP date, in ms from `now`; null when absent or unreadable. */
function retryAfterMs (value: string | undefined, now: number): number | null {
  if (value === undefined) return null
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim()) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, at - now)
}

export async function postWebhook (opts: {
  url: string, headers: Record<string, string>, body: string, timeoutMs: number, policy: AddressPolicy
}): Promise<AttemptOutcome> {
  const url = new URL(opts.url)
  const refusal = await opts.policy.check(url)
  if (refusal !== null) return { kind: 'failed', error: `address not allowed: ${refusal}` }
  const client = url.protocol === 'https:' ? https : http
  return await new Promise(resolve => {
    const req = client.request(url, {
      method: 'POST',
      headers: { ...opts.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) },
      lookup: opts.policy.lookup,
      agent: false,
      signal: AbortSignal.timeout(opts.timeoutMs)
    }, res => {
      res.resume()
      res.on('end', () => {
        resolve({
          kind: 'answered',
          status: res.statusCode ?? 0,
          retryAfterMs: retryAfterMs(res.headers['retry-after'], Date.now())
        })
      })
      res.on('error', () => { resolve({ kind: 'failed', error: 'the answer was cut off' }) })
    })
    req.on('error', (err: NodeJS.ErrnoException) => {
      const refused = err.code === 'ERR_ADDRESS_NOT_ALLOWED' ? `address not allowed: ${err.message}` : null
      const error = err.name === 'AbortError' || err.name === 'TimeoutError'
        ? `timeout after ${opts.timeoutMs} ms`
        : refused ?? err.code ?? 'connection failed'
      resolve({ kind: 'failed', error })
    })
    req.end(opts.body)
  })
}
