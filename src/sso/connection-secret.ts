import { openWith, sealWith, type Keyring } from '../lib/crypto.js'
import { atRestKeyring, type SecretSettings } from '../lib/secret-keys.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import type { Queryable } from '../db/client.js'
import { listSealedClientSecrets, resealClientSecret, type SealedClientSecret } from '../db/sso-connections.js'

// OIDC client secrets at rest, sealed as webhook signing secrets are (src/webhooks/secrets.ts):
// AES-256-GCM under ENCRYPTION_KEY (or a key derived from SESSION_SECRET), bound to the
// connection's id, so a ciphertext copied onto another connection does not open. Never returned.

const context = (connectionId: string): string => `sso-connection:${connectionId}`

/** The keys of the connections' client secrets (src/lib/secret-keys.ts). */
export function ssoKeyring (config: SecretSettings): Keyring {
  return atRestKeyring(config, 'sso client secrets')
}

export function sealClientSecret (key: Keyring, connectionId: string, secret: string): string {
  return sealWith(key, secret, context(connectionId))
}

/** The plaintext client secret, for the token request (the OIDC sign-in). */
export function openClientSecret (key: Keyring, connectionId: string, sealed: string): string {
  return openWith(key, sealed, context(connectionId))
}

/** Re-seals every client secret a previous key sealed under the current one (npm run secrets:reencrypt). */
export async function resealClientSecrets (db: Queryable, config: SecretSettings): Promise<ResealCount> {
  return await resealStore({
    store: 'sso client secrets',
    ring: ssoKeyring(config),
    rows: pages<SealedClientSecret>(async (after, limit) =>
      await listSealedClientSecrets(db, after?.id ?? null, limit)),
    contexts: { clientSecretEnc: context },
    write: async (id, _column, from, to) => await resealClientSecret(db, id, from, to)
  })
}
