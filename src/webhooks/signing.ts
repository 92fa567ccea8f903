import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

// Standard Webhooks (standardwebhooks.com): the secret is `whsec_` + base64 key bytes; each
// delivery carries webhook-id, webhook-timestamp (seconds) and webhook-signature, a space-separated
// list of `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per live secret (rotation).

const PREFIX = 'whsec_'

export function newWebhookSecret (): string {
  return PREFIX + randomBytes(24).toString('base64')
}

function sign (secret: string, msgId: string, timestamp: number | string, body: string | Buffer): Buffer {
  const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
  return createHmac('sha256', key).update(`${msgId}.${timestamp}.`).update(body).digest()
}

export function signatureHeader (secrets: readonly string[], msgId: string, timestamp: number, body: string): string {
  return secrets.map(secret => 'v1,' + sign(secret, msgId, timestamp, body).toString('base64')).join(' ')
}

/** A signed delivery received (Svix, Standard Webhooks): its id, timestamp and signature headers, and raw body. */
export interface SignedDelivery { id: string, timestamp: string, signature: string, body: Buffer }

/**
 * The other direction, for a peer that signs its webhooks this way (Resend, through Svix): true
 * when one of the `v1,` signatures is the secret's over `id.timestamp.body` (constant-time) and the
 * timestamp is within `toleranceSeconds` of now (a captured delivery cannot be replayed later).
 */
export function signatureVerifies (
  secret: string, d: SignedDelivery, nowSeconds: number, toleranceSeconds = 300
): boolean {
  if (!/^[0-9]{1,12}$/.test(d.timestamp) || Math.abs(nowSeconds - Number(d.timestamp)) > toleranceSeconds) return false
  if (d.id === '' || !secret.startsWith(PREFIX)) return false
  const expected = sign(secret, d.id, d.timestamp, d.body)
  return d.signature.split(' ').some(candidate => {
    const [version, value] = candidate.split(',', 2)
    if (version !== 'v1' || value === undefined) return false
    const given = Buffer.from(value, 'base64')
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}
