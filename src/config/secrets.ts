import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { makeDataDir } from './data-dir.js'
import { invalid } from './error.js'

/**
 * SESSION_SECRET, or (local only) a generated one: kept in `dataDir` so sessions survive
 * restarts, or in memory when nothing is kept on disk. `generated` says which.
 */
export function sessionSecret (
  env: { APP_ENV: string, SESSION_SECRET?: string | undefined },
  dataDir: string | null,
  warn: (msg: string) => void
): { secret: string, generated: boolean } {
  const given = env.SESSION_SECRET
  if (given !== undefined && Buffer.byteLength(given) < 32) throw invalid('SESSION_SECRET must be at least 32 bytes')
  if (given !== undefined) return { secret: given, generated: false }
  if (env.APP_ENV !== 'local') {
    throw invalid(`SESSION_SECRET (at least 32 bytes) is required when APP_ENV=${env.APP_ENV}`)
  }
  if (dataDir === null) return { secret: randomBytes(32).toString('base64url'), generated: true }
  makeDataDir(dataDir)
  const file = join(dataDir, 'session-secret')
  let secret: string
  if (existsSync(file)) {
    secret = readFileSync(file, 'utf8').trim()
  } else {
    secret = randomBytes(32).toString('base64url')
    writeFileSync(file, secret + '\n', { mode: 0o600 })
  }
  warn(
    `SESSION_SECRET is not set; using a generated secret kept in ${file} ` +
    '(set SESSION_SECRET outside local development)'
  )
  return { secret, generated: true }
}

/** ENCRYPTION_KEY (32 bytes, as 64 hex characters or base64), the key of secrets at rest. */
export function encryptionKey (value: string | undefined, name = 'ENCRYPTION_KEY'): Buffer | null {
  if (value === undefined) return null
  const k = /^[0-9a-fA-F]{64}$/.test(value) ? Buffer.from(value, 'hex') : Buffer.from(value, 'base64')
  if (k.length !== 32) throw invalid(`${name} must be 32 bytes, as 64 hex characters or base64`)
  return k
}

const listOf = (value: string | undefined): string[] =>
  (value ?? '').split(',').map(s => s.trim()).filter(s => s !== '')

/** SESSION_SECRET_PREVIOUS: the secrets SESSION_SECRET replaced, comma-separated, each ≥ 32 bytes. */
export function previousSessionSecrets (value: string | undefined): string[] {
  const secrets = listOf(value)
  if (secrets.some(s => Buffer.byteLength(s) < 32)) {
    throw invalid('SESSION_SECRET_PREVIOUS: each secret (comma-separated) must be at least 32 bytes')
  }
  return secrets
}

/** ENCRYPTION_KEY_PREVIOUS: the keys ENCRYPTION_KEY replaced, comma-separated, each as ENCRYPTION_KEY. */
export function previousEncryptionKeys (value: string | undefined): Buffer[] {
  return listOf(value).map(k => encryptionKey(k, 'ENCRYPTION_KEY_PREVIOUS (each key, comma-separated)') as Buffer)
}
