import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

// Secrets kept at rest (Slack bot tokens, stored Idempotency-Key answers): AES-256-GCM with
// ENCRYPTION_KEY and a random 96-bit IV per value, stored as base64(iv | tag | ciphertext).
// `context` is bound as additional authenticated data, so a ciphertext copied to another row
// (another team) does not decrypt.

const IV_BYTES = 12
const TAG_BYTES = 16

export function encryptSecret (key: Buffer, plaintext: string, context = ''): string {
  if (key.length !== 32) throw new RangeError('encryptSecret: the key must be 32 bytes')
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES })
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64')
}

/** Throws when the value was not made with this key and context, or was altered. */
export function decryptSecret (key: Buffer, encoded: string, context = ''): string {
  if (key.length !== 32) throw new RangeError('decryptSecret: the key must be 32 bytes')
  const raw = Buffer.from(encoded, 'base64')
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('decryptSecret: the value is too short to be a ciphertext')
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
  decipher.setAAD(Buffer.from(context, 'utf8'))
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
  return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
}

/**
 * The keys of one purpose while a secret rotates: `current` seals everything new; every key of
 * `all` (current first, then the previous ones) opens what is stored.
 */
export interface Keyring {
  readonly current: Buffer
  readonly all: readonly Buffer[]
}

/** A keyring of one key, or of the current key and those it replaced (duplicates dropped). */
export function keyring (current: Buffer, previous: readonly Buffer[] = []): Keyring {
  const all = [current]
  for (const k of previous) if (!all.some(a => a.equals(k))) all.push(k)
  return Object.freeze({ current, all: Object.freeze(all) })
}

/** Seals with the ring's current key. */
export function sealWith (ring: Keyring, plaintext: string, context = ''): string {
  return encryptSecret(ring.current, plaintext, context)
}

/** Opens with whichever key of the ring sealed it; throws when none did (the first key's error). */
export function openWith (ring: Keyring, encoded: string, context = ''): string {
  return openWithKey(ring, encoded, context).plaintext
}

/** As openWith, and whether the current key sealed it (false: a re-encryption would rewrite it). */
export function openWithKey (ring: Keyring, encoded: string, context = ''): { plaintext: string, current: boolean } {
  let first: unknown
  for (const [i, key] of ring.all.entries()) {
    try {
      return { plaintext: decryptSecret(key, encoded, context), current: i === 0 }
    } catch (err) {
      first ??= err
    }
  }
  throw first
}

/** A 32-byte key for one purpose, derived (HKDF-SHA256) from a configured secret. */
export function deriveKey (secret: string, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, '', purpose, 32))
}
