import type { Config } from '../config.js'
import { openWith, sealWith, type Keyring } from '../lib/crypto.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import { listSealedLinks, resealLink, type SealedLink } from '../db/invitations.js'
import { atRestKeyring } from '../lib/secret-keys.js'
import type { Ports } from '../ports/index.js'
import { hashToken, safeEqual } from '../lib/tokens.js'

// A reminder carries the invitation's current link (no rotation just to remind), but the row
// keeps only the token's hash. So the token an e-mail carried is also kept sealed: AES-256-GCM
// (src/lib/crypto.ts) with ENCRYPTION_KEY, or else a key derived from SESSION_SECRET (as the
// webhook signing secrets), bound to the invitation's id. No live secret is readable in the
// database: a dump without the key yields no link. The seal is written only when our e-mail
// left with that token, and cleared when the token rotates or stops working (accepted, revoked,
// expired). Keys of SESSION_SECRET_PREVIOUS / ENCRYPTION_KEY_PREVIOUS still open a seal
// (src/lib/secret-keys.ts); resealInvitationLinks rewrites them under the current key.

const keys = new WeakMap<Config, Keyring>()

function keyOf (config: Config): Keyring {
  let key = keys.get(config)
  if (key === undefined) {
    key = atRestKeyring(config, 'invitation links')
    keys.set(config, key)
  }
  return key
}

const contextOf = (invitationId: string): string => `invitation-link:${invitationId}`

export function sealToken (config: Config, invitationId: string, token: string): string {
  return sealWith(keyOf(config), token, contextOf(invitationId))
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
    token = openWith(keyOf(config), sealed, contextOf(invitation.id))
  } catch {
    return null
  }
  return invitation.tokenHash !== null && safeEqual(hashToken(token), invitation.tokenHash) ? token : null
}

/** Re-seals every reminder link a previous key sealed under the current one (npm run secrets:reencrypt). */
export async function resealInvitationLinks (deps: Pick<Ports, 'db' | 'config'>): Promise<ResealCount> {
  return await resealStore({
    store: 'reminder links',
    ring: keyOf(deps.config),
    rows: pages<SealedLink>(async (after, limit) => await listSealedLinks(deps.db, after?.id ?? null, limit)),
    contexts: { linkSealed: (id: string) => contextOf(id) },
    write: async (id, _column, from, to) => await resealLink(deps.db, id, from, to)
  })
}
