import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'

/** A URL-safe secret with `bytes` bytes (≥ 16, i.e. ≥ 128 bits) from the CSPRNG. */
export function randomToken (bytes = 32): string {
  if (bytes < 16) throw new RangeError('tokens carry at least 128 bits')
  return randomBytes(bytes).toString('base64url')
}

/** What the database keeps instead of a token: its SHA-256, hex. Tokens have full entropy, so no salt. */
export function hashToken (token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** Constant-time comparison of two strings (false when lengths differ, without early exit on content). */
export function safeEqual (a: string, b: string): boolean {
  const ba = Buffer.from(a)
  const bb = Buffer.from(b)
  if (ba.length !== bb.length) {
    // Compare against itself so the time does not depend on where the strings differ.
    timingSafeEqual(ba, ba)
    return false
  }
  return timingSafeEqual(ba, bb)
}

/**
 * Whether the browser whose secret is `browser` (its login_link_browser cookie) is the one that
 * asked for an e-mailed link, whose row kept `storedHash`: false when either is missing.
 */
export function sameBrowser (browser: string | null, storedHash: string | null): boolean {
  return browser !== null && storedHash !== null && safeEqual(hashToken(browser), storedHash)
}
