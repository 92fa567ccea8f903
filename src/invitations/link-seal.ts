import type { Config } from '../config.js'
import { decryptSecret, deriveKey, encryptSecret } from '../lib/crypto.js'
import { hashToken, safeEqual } from '../lib/tokens.js'

// A reminder carries the invitation's current link (no rotation just to remind), but the row
// keeps only the token's hash. So the token an e-mail carried is also kept sealed: AES-256-GCM
// (src/lib/crypto.ts) with ENCRYPTION_KEY, or else a key derived from SESSION_SECRET (as the
// webhook signing secrets), bound to the invitation's id. No live secret is readable in the
// database: a dump without the key yields no link. The seal is written only when our e-mail
// left with that token, and cleared when the token rotates or stops working (accepted, revoked,
// expired).

const keys = new WeakMap<Config, Buffer>()

function keyOf (config: Config): Buffer {
  let key = keys.get(config)
  if (key === undefined) {
    key = config.encryptionKey ?? deriveKey(config.session.secret, 'invitation links')
    keys.set(config, key)
  }
  return key
}

const contextOf = (invitationId: string): string => `invitation-link:${invitationId}`

export function sealToken (config: Config, invitationId: string, token: string): string {
  return encryptSecret(keyOf(config), token, contextOf(invitationId))
}

/**
 * The token sealed for this invitation if it is still the one its hash names; null when it
 * cannot be opened (another key, another row) or was rotated since.
 */
export function openToken (
  config: Config, invitation: { id: string, tokenHash: string | null }, sealed: string
): string | null {
  let token: string
  try {
    token = decryptSecret(keyOf(config), sealed, contextOf(invitation.id))
  } catch {
    return null
  }
  return invitation.tokenHash !== null && safeEqual(hashToken(token), invitation.tokenHash) ? token : null
}
