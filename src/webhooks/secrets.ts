import { openWith, sealWith, type Keyring } from '../lib/crypto.js'
import { atRestKeyring, type SecretSettings } from '../lib/secret-keys.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import type { Queryable } from '../db/client.js'
import {
  listSealedEndpointSecrets, resealEndpointSecret, type SealedEndpointSecrets, type WebhookEndpointRow
} from '../db/webhook-endpoints.js'

// Signing secrets at rest: AES-256-GCM under the service's key, bound to the endpoint's id (a
// ciphertext copied onto another endpoint does not decrypt). The plaintext is shown once. The key is
// ENCRYPTION_KEY, or else one derived from SESSION_SECRET; their previous values still open.

const context = (endpointId: string): string => `webhook-endpoint:${endpointId}`

/** The keys of the endpoints' signing secrets (src/lib/secret-keys.ts). */
export function webhookKeyring (config: SecretSettings): Keyring {
  return atRestKeyring(config, 'webhook signing secrets')
}

export function sealSecret (key: Keyring, endpointId: string, secret: string): string {
  return sealWith(key, secret, context(endpointId))
}

/** The secrets that sign now: the current one, and the previous one during its overlap. */
export function signingSecrets (key: Keyring, endpoint: WebhookEndpointRow, now: Date): string[] {
  const secrets = [openWith(key, endpoint.secretEnc, context(endpoint.id))]
  if (endpoint.previousSecretEnc !== null && endpoint.previousSecretUntil !== null &&
    endpoint.previousSecretUntil.getTime() > now.getTime()) {
    secrets.push(openWith(key, endpoint.previousSecretEnc, context(endpoint.id)))
  }
  return secrets
}

/** Re-seals every signing secret a previous key sealed under the current one (npm run secrets:reencrypt). */
export async function resealSigningSecrets (db: Queryable, config: SecretSettings): Promise<ResealCount> {
  return await resealStore({
    store: 'webhook signing secrets',
    ring: webhookKeyring(config),
    rows: pages<SealedEndpointSecrets>(async (after, limit) =>
      await listSealedEndpointSecrets(db, after?.id ?? null, limit)),
    contexts: { secretEnc: context, previousSecretEnc: context },
    write: async (id, column, from, to) =>
      await resealEndpointSecret(db, id, column as 'secretEnc' | 'previousSecretEnc', from, to)
  })
}
