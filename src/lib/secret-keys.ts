import { deriveKey, keyring, type Keyring } from './crypto.js'

// Where each key comes from while SESSION_SECRET and ENCRYPTION_KEY rotate (docs/operating.md,
// "Rotating secrets"). Every key is one of a keyring: the current secret makes everything new,
// the previous ones (SESSION_SECRET_PREVIOUS, ENCRYPTION_KEY_PREVIOUS) only read what is stored.

/** What of the Config the keys are made from (structural: src/lib imports no Config). */
export interface SecretSettings {
  readonly session: { readonly secret: string, readonly previousSecrets: readonly string[] }
  readonly encryptionKey: Buffer | null
  readonly previousEncryptionKeys: readonly Buffer[]
}

/** A key derived (HKDF) from SESSION_SECRET for one purpose, and from each previous secret. */
export function sessionKeyring (s: SecretSettings, purpose: string): Keyring {
  return keyring(
    deriveKey(s.session.secret, purpose), s.session.previousSecrets.map(p => deriveKey(p, purpose))
  )
}

/**
 * Secrets at rest that ENCRYPTION_KEY seals when it is set and a key derived from SESSION_SECRET
 * seals otherwise (webhook signing secrets, reminder links). Both kinds stay readable: a first
 * ENCRYPTION_KEY set where there was none reads what the derived key sealed until it is
 * re-encrypted (npm run secrets:reencrypt).
 */
export function atRestKeyring (s: SecretSettings, purpose: string): Keyring {
  const derived = sessionKeyring(s, purpose).all
  return s.encryptionKey === null
    ? keyring(derived[0] as Buffer, [...derived.slice(1), ...s.previousEncryptionKeys])
    : keyring(s.encryptionKey, [...s.previousEncryptionKeys, ...derived])
}

/** ENCRYPTION_KEY and its previous keys (Slack bot tokens: never sealed otherwise); null without one. */
export function encryptionKeyring (s: SecretSettings): Keyring | null {
  return s.encryptionKey === null ? null : keyring(s.encryptionKey, s.previousEncryptionKeys)
}
