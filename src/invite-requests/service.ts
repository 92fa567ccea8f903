import type { Ports } from '../ports.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { InviteResult } from '../invitations/delivery.js'
import { serviceError } from '../errors.js'
import { isMemberEmail, type Role } from '../db/users.js'
import { findInvitePolicy, type InvitePolicy } from '../db/workspaces.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { emailAddress } from '../lib/email.js'
import { isUuid } from '../lib/uuid.js'
import {
  decideInviteRequest, effectiveRequestStatus, findInviteRequest, insertInviteRequest, listInviteRequests,
  findPendingInviteRequest, lockAndCountOpenRequests,
  reopenInviteRequest, type InviteRequestRow, type InviteRequestStatus
} from '../db/invite-requests.js'

// Invite requests: under the `request` policy a member asks for someone to be invited, and an
// admin of the workspace approves (the invitation is then sent in the admin's name) or denies.
// Every door (REST, MCP, Slack buttons) comes through here; the decision is one guarded UPDATE,
// so two admins deciding at once make one decision and at most one invitation.

type InviteRequestView = components['schemas']['InviteRequest']

/** Requests lapse after a week, like invitations by default. */
const REQUEST_TTL_MS = 7 * 86_400_000

/** What happened to a request, for whoever tells people about it (the Slack app). */
export interface InviteRequestNotice {
  kind: 'created' | 'approved' | 'denied'
  request: InviteRequestRow
  /** The requester (created) or the deciding admin. */
  actor: Principal
}

export interface InviteRequestService {
  policyOf(workspaceId: string): Promise<InvitePolicy>
  /** A member asks; the pending request this e-mail already has is returned as it is. */
  request(actor: Principal, input: { email: string, role: Role }): Promise<{ row: InviteRequestRow, created: boolean }>
  list(actor: Principal, q: {
    status?: InviteRequestStatus,
    mine?: boolean,
    limit: number,
    cursor?: string
  }): Promise<{ items: InviteRequestView[], nextCursor: string | null }>
  /** One request of the actor's workspace, or null. */
  find(actor: Principal, requestId: string): Promise<InviteRequestView | null>
  approve(actor: Principal, requestId: string, input: { role?: Role }): Promise<{
    request: InviteRequestView,
    invitation: InviteResult
  }>
  deny(actor: Principal, requestId: string, input: { reason?: string }): Promise<InviteRequestView>
  toView(row: InviteRequestRow): InviteRequestView
}

export type InviteRequestDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'log' | 'events'> & {
  invitations: { invite(actor: Principal, input: { email: string, role: Role }): Promise<InviteResult> }
  /** Told after each change is committed; must not throw (the Slack app queues its own work). */
  notify(notice: InviteRequestNotice): void
}

function requireAdmin (actor: Principal): void {
  if (actor.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
}

export function createInviteRequestService (deps: InviteRequestDeps): InviteRequestService {
  const { db, clock } = deps

  function toView (row: InviteRequestRow): InviteRequestView {
    const iso = (d: Date | null): string | null => d === null ? null : new Date(d).toISOString()
    return {
      id: row.id,
      email: row.email,
      role: row.role,
      status: effectiveRequestStatus(row, clock.now()),
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
  async function notPending (actor: Principal, requestId: string): Promise<never> {
    const current = isUuid(requestId) ? await findInviteRequest(db, actor.workspaceId, requestId) : null
    if (current === null) throw serviceError('NOT_FOUND', ['Invite request'])
    throw serviceError('INVITE_REQUEST_NOT_PENDING', [effectiveRequestStatus(current, clock.now())])
  }

  async function policyOf (workspaceId: string): Promise<InvitePolicy> {
    const policy = await findInvitePolicy(db, workspaceId)
    if (policy === null) throw workspaceGone()
    return policy
  }

  return {
    policyOf,
    toView,

    async request (actor, input) {
      if (await policyOf(actor.workspaceId) !== 'request') throw serviceError('FORBIDDEN', ['admin'])
      const email = emailAddress(input.email)
      if (await isMemberEmail(db, actor.workspaceId, email)) throw serviceError('USER_EXISTS')
      const now = clock.now()
      const cap = deps.config.inviteRequestsPerMember
      const result = await db.transaction(async tx => {
        // Each new request messages every admin: one member's open requests are capped.
        const open = await lockAndCountOpenRequests(
          tx, { workspaceId: actor.workspaceId, requestedBy: actor.userId, now }
        )
        if (open >= cap) {
          // Asking again for an address already asked for is not a new request.
          const existing = await findPendingInviteRequest(tx, { workspaceId: actor.workspaceId, email, now })
          if (existing !== null) return { row: existing, created: false }
          deps.log.warn(
            { workspaceId: actor.workspaceId, userId: actor.userId, open },
            'invite request refused: the member has INVITE_REQUESTS_PER_MEMBER pending requests'
          )
          throw serviceError('INVITE_REQUEST_LIMIT_REACHED', [String(cap)])
        }
        const inserted = await insertInviteRequest(tx, {
          workspaceId: actor.workspaceId,
          email,
          role: input.role,
          requestedBy: actor.userId,
          expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
          now
        })
        if (inserted.created) {
          await auditPrincipalAction(deps.events, tx, actor, {
            action: 'invite_request.created',
            target: { type: 'invite_request', id: inserted.row.id },
            payload: { email, role: input.role },
            now
          })
        }
        return inserted
      })
      if (result.created) deps.notify({ kind: 'created', request: result.row, actor })
      return result
    },

    async list (actor, q) {
      const now = clock.now()
      const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
      // Members see only their own requests (App Home); the REST operation is for admins.
      const requestedBy = q.mine === true || actor.role !== 'admin' ? actor.userId : undefined
      const rows = await listInviteRequests(
        db, { workspaceId: actor.workspaceId, status: q.status, requestedBy, now, limit: q.limit + 1, before }
      )
      const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: new Date(r.createdAt), id: r.id }))
      return { items: page.map(toView), nextCursor }
    },

    async find (actor, requestId) {
      if (!isUuid(requestId)) return null
      const row = await findInviteRequest(db, actor.workspaceId, requestId)
      return row === null ? null : toView(row)
    },

    async approve (actor, requestId, input) {
      requireAdmin(actor)
      // REST checks the id's format; Slack's button values and MCP arguments are checked here.
      if (!isUuid(requestId)) return await notPending(actor, requestId)
      // The claim: of concurrent approvals (and denials) exactly one gets the row.
      const claimed = await decideInviteRequest(db, {
        workspaceId: actor.workspaceId,
        id: requestId,
        status: 'approved',
        role: input.role ?? null,
        decidedBy: actor.userId,
        reason: null,
        now: clock.now()
      })
      if (claimed === null) return await notPending(actor, requestId)
      let invitation: InviteResult
      try {
        invitation = await deps.invitations.invite(actor, { email: claimed.email, role: claimed.role })
      } catch (err) {
        // No invitation was made (the person joined meanwhile, the budget ran out, the send
        // failed): the request is pending again, to be approved again or denied.
        await reopenInviteRequest(db, claimed.id, clock.now())
        throw err
      }
      const now = clock.now()
      await auditPrincipalAction(deps.events, db, actor, {
        action: 'invite_request.approved',
        target: { type: 'invite_request', id: claimed.id },
        payload: { email: claimed.email, role: claimed.role },
        now
      })
      deps.notify({ kind: 'approved', request: claimed, actor })
      return { request: toView(claimed), invitation }
    },

    async deny (actor, requestId, input) {
      requireAdmin(actor)
      if (!isUuid(requestId)) return await notPending(actor, requestId)
      const reason = input.reason?.trim() ?? ''
      const now = clock.now()
      const denied = await db.transaction(async tx => {
        const row = await decideInviteRequest(tx, {
          workspaceId: actor.workspaceId,
          id: requestId,
          status: 'denied',
          role: null,
          decidedBy: actor.userId,
          reason: reason === '' ? null : reason,
          now
        })
        if (row === null) return null
        await auditPrincipalAction(deps.events, tx, actor, {
          action: 'invite_request.denied',
          target: { type: 'invite_request', id: row.id },
          payload: { email: row.email, role: row.role, reason: row.reason },
          now
        })
        return row
      })
      if (denied === null) return await notPending(actor, requestId)
      deps.notify({ kind: 'denied', request: denied, actor })
      return toView(denied)
    }
  }
}
