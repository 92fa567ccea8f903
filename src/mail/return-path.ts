import { createHmac, timingSafeEqual } from 'node:crypto'
import { sessionKeyring, type SecretSettings } from '../lib/secret-keys.js'

// The per-invitation return path (VERP): the envelope sender (MAIL FROM) of an invitation e-mail
// is `bounces+<invitationId>.<mac>@<BOUNCE_DOMAIN>`, so a delivery status notification names the
// invitation by the address it is sent to. The MAC (HMAC-SHA256 of the id under a key derived
// from SESSION_SECRET, its first 8 bytes as hex) makes the address unforgeable: nobody can aim a
// bounce at an invitation they did not receive the e-mail of. Addresses made under a previous
// secret (SESSION_SECRET_PREVIOUS) stay ours while it is listed: DSNs arrive days after the send.
// The local part is 61 characters (RFC 5321 allows 64), lower case: some relays fold the case of
// local parts.

const PREFIX = 'bounces+'
const MAC_HEX = 16
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export interface ReturnPaths {
  /** The return path of one invitation's e-mails. */
  of(invitationId: string): string
  /** The invitation a return path names, or null when it is not one of ours (another domain, a bad MAC). */
  invitationOf(address: string): string | null
}

export function createReturnPaths (opts: { secrets: SecretSettings, domain: string }): ReturnPaths {
  const ring = sessionKeyring(opts.secrets, 'bounce return path')
  const domain = opts.domain.toLowerCase()
  const macWith = (key: Buffer, id: string): string =>
    createHmac('sha256', key).update(id).digest('hex').slice(0, MAC_HEX)
  const ours = (given: string, id: string): boolean => ring.all.some(key =>
    timingSafeEqual(Buffer.from(given, 'hex'), Buffer.from(macWith(key, id), 'hex')))
  return {
    of (invitationId) {
      const id = invitationId.toLowerCase()
      return `${PREFIX}${id}.${macWith(ring.current, id)}@${domain}`
    },
    invitationOf (address) {
      const at = address.lastIndexOf('@')
      if (at < 0 || address.slice(at + 1).toLowerCase() !== domain) return null
      const local = address.slice(0, at).toLowerCase()
      if (!local.startsWith(PREFIX)) return null
      const [id, given, ...rest] = local.slice(PREFIX.length).split('.')
      if (id === undefined || given === undefined || rest.length > 0 || !UUID.test(id)) return null
      if (!/^[0-9a-f]+$/.test(given) || given.length !== MAC_HEX) return null
      return ours(given, id) ? id : null
    }
  }
}

/** An invitation's return path when BOUNCE_DOMAIN is set; undefined (MAIL_FROM's address) otherwise. */
export function invitationReturnPath (
  config: SecretSettings & { bounces: { domain: string | null } }, invitationId: string
): string | undefined {
  const domain = config.bounces.domain
  return domain === null ? undefined : createReturnPaths({ secrets: config, domain }).of(invitationId)
}
