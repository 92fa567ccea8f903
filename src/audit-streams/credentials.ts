import { openWith, sealWith, type Keyring } from '../lib/crypto.js'
import { atRestKeyring, type SecretSettings } from '../lib/secret-keys.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import type { Queryable } from '../db/client.js'
import {
  listSealedStreamCredentials, resealStreamCredential, type SealedStreamCredentials
} from '../db/audit-streams.js'

// A stream's credential (an https stream's signing secret, Splunk's HEC token, Datadog's API key)
// at rest: AES-256-GCM under the service's key, bound to the stream's id, as webhook signing
// secrets are (src/webhooks/secrets.ts). Re-sealed by npm run secrets:reencrypt.

const context = (streamId: string): string => `audit-stream:${streamId}`

export function streamKeyring (config: SecretSettings): Keyring {
  return atRestKeyring(config, 'audit stream credentials')
}

export function sealCredential (key: Keyring, streamId: string, credential: string): string {
  return sealWith(key, credential, context(streamId))
}

export function openCredential (key: Keyring, streamId: string, sealed: string): string {
  return openWith(key, sealed, context(streamId))
}

/** Re-seals every credential a previous key sealed under the current one. */
export async function resealStreamCredentials (db: Queryable, config: SecretSettings): Promise<ResealCount> {
  return await resealStore({
    store: 'audit stream credentials',
    ring: streamKeyring(config),
    rows: pages<SealedStreamCredentials>(async (after, limit) =>
      await listSealedStreamCredentials(db, after?.id ?? null, limit)),
    contexts: { credentialEnc: context },
    write: async (id, _column, from, to) => await resealStreamCredential(db, id, from, to)
  })
}
