import type { Ports } from '../ports/index.js'
import type { Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { InviteResult } from '../invitations/delivery.js'
import { serviceError } from '../errors.js'
import type { Role } from '../db/users.js'
import { isUuid } from '../lib/uuid.js'
import { effectiveRequestStatus, findInviteRequest, type InviteRequestRow } from '../db/invite-requests.js'

// What the invite-request operations share (request.ts, view.ts, approve.ts, deny.ts): their
// dependencies, the view of a row, the workspace's policy and the refusals of a decision.

export type InviteRequestView = components['schemas']['InviteRequest']

/** What happened to a request, for whoever tells people about it (the Slack app). */
export interface InviteRequestNotice {
  kind: 'created' | 'approved' | 'denied'
  request: InviteRequestRow
  /** The requester (created) or the deciding admin; null: the person asked for themselves. */
  actor: Principal | null
}

/** Posts a digest of the requests waiting for one admin in Slack (nothing when it is not installed). */
export type TellInSlack = (notice: {
  workspaceId: string, adminEmail: string, requests: InviteRequestRow[]
}) => Promise<void>

/** Told after an invite request's change is committed; must not throw (Slack queues its own work). */
export type NotifyRequest = (notice: InviteRequestNotice) => void

export type InviteRequestDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'log' | 'events' | 'mailer' | 'jobs'> & {
  invitations: { invite(actor: Principal, input: { email: string, role: Role }): Promise<InviteResult> }
  notify: NotifyRequest
  /** Posts a digest of waiting requests to an admin in Slack (admin-notices.ts). */
  tellInSlack: TellInSlack
}

export function inviteRequestView (deps: Pick<Ports, 'clock'>, row: InviteRequestRow): InviteRequestView {
  const iso = (d: Date | null): string | null => d === null ? null : new Date(d).toISOString()
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: effectiveRequestStatus(row, deps.clock.now()),
    requestedBy: row.requestedBy,
    decidedBy: row.decidedBy,
    decidedAt: iso(row.decidedAt),
    reason: row.reason,
    expiresAt: new Date(row.expiresAt).toISOString(),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString()
  }
}

/** Why a request cannot be decided: unknown (404) or no longer pending (409). */
export async function notPending (
  deps: Pick<Ports, 'db' | 'clock'>,
  actor: Principal,
  requestId: string
): Promise<never> {
  const current = isUuid(requestId) ? await findInviteRequest(deps.db, actor.workspaceId, requestId) : null
  if (current === null) throw serviceError('NOT_FOUND', ['Invite request'])
  throw serviceError('INVITE_REQUEST_NOT_PENDING', [effectiveRequestStatus(current, deps.clock.now())])
}
