import { decryptSecret, encryptSecret } from '../lib/crypto.js'
import type { WebhookEndpointRow } from '../db/webhook-endpoints.js'

// Signing secrets at rest: AES-256-GCM under the service's key, bound to the endpoint's id (a
// ciphertext copied onto another endpoint does not decrypt). The plaintext is shown once.

const context = (endpointId: string): string => `webhook-endpoint:${endpointId}`

export function sealSecret (key: Buffer, endpointId: string, secret: string): string {
  return encryptSecret(key, secret, context(endpointId))
}

/** The secrets that sign now: the current one, and the previous one during its overlap. */
export function signingSecrets (key: Buffer, endpoint: WebhookEndpointRow, now: Date): string[] {
  const secrets = [decryptSecret(key, endpoint.secretEnc, context(endpoint.id))]
  if (endpoint.previousSecretEnc !== null && endpoint.previousSecretUntil !== null &&
    endpoint.previousSecretUntil.getTime() > now.getTime()) {
    secrets.push(decryptSecret(key, endpoint.previousSecretEnc, context(endpoint.id)))
  }
  return secrets
}
