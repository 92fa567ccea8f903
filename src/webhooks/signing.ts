import { createHmac, randomBytes } from 'node:crypto'

// Standard Webhooks (standardwebhooks.com): the secret is `whsec_` + base64 key bytes; each
// delivery carries webhook-id, webhook-timestamp (seconds) and webhook-signature, a space-separated
// list of `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, one per live secret (rotation).

const PREFIX = 'whsec_'

export function newWebhookSecret (): string {
  return PREFIX + randomBytes(24).toString('base64')
}

export function signatureHeader (secrets: readonly string[], msgId: string, timestamp: number, body: string): string {
  return secrets.map(secret => {
    const key = Buffer.from(secret.slice(PREFIX.length), 'base64')
    return 'v1,' + createHmac('sha256', key).update(`${msgId}.${timestamp}.${body}`).digest('base64')
  }).join(' ')
}
