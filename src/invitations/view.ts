import type { components } from '../generated/openapi.js'
import type { Database } from '../db/client.js'
import type { Clock } from '../clock.js'
import type { Principal } from '../principal.js'
import {
  effectiveStatus, findInviters, listInvitations, type InvitationRow, type InvitationStatus
} from '../db/invitations.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'

/** The contract's Invitation schema: dates as ISO strings, status after the expiry rule. */
export type InvitationView = components['schemas']['Invitation']

export function toInvitationView (row: InvitationRow, now: Date): InvitationView {
  const iso = (d: Date | null): string | null => d === null ? null : new Date(d).toISOString()
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: effectiveStatus(row, now),
    deliveryStatus: row.deliveryStatus,
    identityProviderInvitationId: row.idpInvitationId,
    invitedBy: row.invitedBy,
    deliveryError: row.deliveryError,
    expiresAt: new Date(row.expiresAt).toISOString(),
    lastSentAt: iso(row.lastSentAt),
    acceptedAt: iso(row.acceptedAt),
    revokedAt: iso(row.revokedAt),
    viewedAt: iso(row.viewedAt),
    bouncedAt: iso(row.bouncedAt),
    bounceReason: row.bounceReason,
    remindedAt: iso(row.remindedAt),
    locale: row.locale,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString()
  }
}

export interface InvitationListQuery { status?: InvitationStatus, limit: number, cursor?: string }

/** One page of the actor's workspace's invitations, newest first. */
export async function listInvitationPage (
  deps: { db: Database, clock: Clock },
  actor: Principal,
  q: InvitationListQuery
): Promise<{ items: InvitationView[], nextCursor: string | null }> {
  const now = deps.clock.now()
  const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
  const rows = await listInvitations(
    deps.db, { workspaceId: actor.workspaceId, status: q.status, now, limit: q.limit + 1, before }
  )
  const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: new Date(r.createdAt), id: r.id }))
  const found = await findInviters(deps.db, actor.workspaceId, { invitationIds: page.map(r => r.id) })
  const inviters = new Map(found.map(i => [i.invitationId, i]))
  return {
    items: page.map(r => {
      const by = inviters.get(r.id)
      return { ...toInvitationView(r, now), inviter: by?.inviter ?? null }
    }),
    nextCursor
  }
}
