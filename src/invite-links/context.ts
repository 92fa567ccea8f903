import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { SessionService } from '../sessions/service.js'
import type { NotifyRequest } from '../invite-requests/context.js'
import { serviceError } from '../errors.js'
import { hashToken } from '../lib/tokens.js'
import {
  findInviteLinkByCodeHash, inviteLinkStatus, type InviteLinkRow
} from '../db/invite-links.js'
import type { Queryable } from '../db/client.js'

// What the invite-link operations share (manage.ts, join.ts, confirm.ts): their dependencies,
// the view of a row, the link a code names and the refusals of one that is not usable.

export type InviteLinkView = components['schemas']['InviteLink']
export type InviteLinkCreated = components['schemas']['InviteLinkCreated']

export type InviteLinkDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'mailer' | 'log' | 'events' | 'jobs'> & {
  sessions: SessionService
  /** Told of a join that became an invite request (a link that needs approval). */
  notifyRequest: NotifyRequest
}

/** Codes carry 24 random bytes (192 bits); only their SHA-256 is stored. */
export const CODE_BYTES = 24

export function inviteLinkView (row: InviteLinkRow, now: Date): InviteLinkView {
  return {
    id: row.id,
    name: row.name,
    role: row.role,
    status: inviteLinkStatus(row, now),
    maxUses: row.maxUses,
    uses: row.uses,
    allowedDomains: row.allowedDomains,
    requiresApproval: row.requiresApproval,
    expiresAt: new Date(row.expiresAt).toISOString(),
    createdBy: row.createdBy,
    createdAt: new Date(row.createdAt).toISOString(),
    revokedAt: row.revokedAt === null ? null : new Date(row.revokedAt).toISOString(),
    locale: row.locale
  }
}

/** The whole link, `{PUBLIC_URL}/join/{code}`: only in the answers that made the code. */
export function joinUrl (deps: Pick<Ports, 'config'>, code: string): string {
  return `${deps.config.publicUrl}/join/${code}`
}

/** The link a code names while it may be used; otherwise the registry error (404 or 410). */
export async function usableLink (q: Queryable, code: string, now: Date): Promise<InviteLinkRow> {
  const link = await findInviteLinkByCodeHash(q, hashToken(code))
  refuseUnusable(link, now)
  return link as InviteLinkRow
}

/** Throws unless the link is active: unknown or revoked 404, expired or used up 410. */
export function refuseUnusable (link: InviteLinkRow | null, now: Date): void {
  const status = link === null ? 'revoked' : inviteLinkStatus(link, now)
  if (status === 'revoked') throw serviceError('NOT_FOUND', ['Invite link'])
  if (status === 'expired') throw serviceError('TOKEN_EXPIRED')
  if (status === 'used_up') throw serviceError('TOKEN_USED')
}

/** The link's domain rule on an address (lower case): no domains admits every address. */
export function requireAllowedDomain (link: InviteLinkRow, email: string): void {
  if (link.allowedDomains.length === 0) return
  const domain = email.slice(email.lastIndexOf('@') + 1)
  if (!link.allowedDomains.includes(domain)) {
    throw serviceError('EMAIL_DOMAIN_NOT_ALLOWED', [link.allowedDomains.join(', ')])
  }
}
