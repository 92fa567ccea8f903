import { createHmac } from 'node:crypto'
import { safeEqual } from '../lib/tokens.js'

// Slack request signing: X-Slack-Signature = 'v0=' + hex HMAC-SHA256 of
// 'v0:{X-Slack-Request-Timestamp}:{raw body}' with the signing secret. The timestamp bounds
// replay: a request more than five minutes from our clock, in either direction, is refused.

const MAX_SKEW_SECONDS = 5 * 60

export function slackSignature (signingSecret: string, timestamp: string, rawBody: Buffer | string): string {
  const hmac = createHmac('sha256', signingSecret)
  hmac.update(`v0:${timestamp}:`)
  hmac.update(rawBody)
  return `v0=${hmac.digest('hex')}`
}

export type SignatureProblem = 'missing' | 'stale' | 'mismatch'

/** null when the signature is valid now; otherwise what is wrong (for debug logs, not clients). */
export function checkSlackSignature (input: {
  signingSecret: string
  signature: unknown
  timestamp: unknown
  rawBody: Buffer | null
  now: Date
}): SignatureProblem | null {
  const { signature, timestamp, rawBody } = input
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || rawBody === null) return 'missing'
  if (!/^[0-9]{1,12}$/.test(timestamp)) return 'missing'
  if (Math.abs(input.now.getTime() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return 'stale'
  // Constant-time: the comparison takes as long wherever the strings differ.
  return safeEqual(signature, slackSignature(input.signingSecret, timestamp, rawBody)) ? null : 'mismatch'
}
