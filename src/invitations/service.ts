import type { Ports } from '../ports.js'
import type { Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import { serviceError } from '../errors.js'
import { findUserByEmail, type Role } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { insertAuditEvent } from '../db/audit-events.js'
import { auditActorOf } from '../audit/actor.js'
import {
  effectiveStatus, expireStalePendingInvitation, findInvitation, listInvitations, markInvitationRevoked,
  refreshInvitationToken, takeSendLease, upsertPendingInvitation, type InvitationRow, type InvitationStatus
} from '../db/invitations.js'
import { createSendLease } from './send-lease.js'
import type { Idempotency, IdempotencyKeyOf } from '../idempotency/idempotency.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { emailAddress } from '../lib/email.js'
import { createIdentityProviderInvitations, type IdentityProviderInvitations } from '../idp/invitations.js'
import type { components } from '../generated/openapi.js'
import { deliverInvitation, type InviteResult, type Inviter } from './delivery.js'

/** The contract's Invitation schema: dates as ISO strings, status after the expiry rule. */
type InvitationView = components['schemas']['Invitation']

export interface InvitationService {
  /**
   * Invite (or re-invite) an e-mail into the actor's workspace. Throws registry errors. Draws on
   * the workspace's invitation-e-mail budget, except for a replay of an Idempotency-Key. With
   * `idempotency`, the key's semantics (src/idempotency) over the normalized input.
   */
  invite(actor: Principal, input: {
    email: string,
    role: Role
  }, opts?: { idempotency?: IdempotencyKeyOf }): Promise<InviteResult>
  list(actor: Principal, q: {
    status?: InvitationStatus,
    limit: number,
    cursor?: string
  }): Promise<{ items: InvitationView[], nextCursor: string | null }>
  /** Fresh token and expiry for a pending invitation, and send it again. */
  resend(actor: Principal, invitationId: string): Promise<InviteResult>
  revoke(actor: Principal, invitationId: string): Promise<InvitationView>
}

const DAY_MS = 86_400_000

function toInvitationView (row: InvitationRow, now: Date): InvitationView {
  const iso = (d: Date | null): string | null => d === null ? null : new Date(d).toISOString()
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: effectiveStatus(row, now),
    deliveryStatus: row.deliveryStatus,
    identityProviderInvitationId: row.idpInvitationId,
    invitedBy: row.invitedBy,
    expiresAt: new Date(row.expiresAt).toISOString(),
    lastSentAt: iso(row.lastSentAt),
    acceptedAt: iso(row.acceptedAt),
    revokedAt: iso(row.revokedAt),
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString()
  }
}

function inviterOf (p: Principal): Inviter {
  return { name: p.name ?? p.email, audit: auditActorOf(p), userId: p.kind === 'apiKey' ? null : p.userId }
}

export function createInvitationService (
  ports: Ports,
  idempotency: Idempotency,
  idpOverride?: IdentityProviderInvitations
): InvitationService {
  const { db, clock, config, log } = ports
  const idp = idpOverride ?? createIdentityProviderInvitations(config)
  const ttlMs = config.invitationTtlDays * DAY_MS
  // A request waits for another's send at most the longest delivery (the SMTP deadline, or the
  // identity provider's calls) plus margin; the lease itself is short and renewed while sending.
  const waitMs = Math.max(2 * config.smtp.timeoutMs, 3 * (config.workos?.timeoutMs ?? 0)) + 5_000
  const underSendLease = createSendLease({ db, clock, log, leaseMs: config.idempotencyLeaseMs, waitMs })

  const workspaceOf = async (actor: Principal) => {
    const ws = await findWorkspace(db, actor.workspaceId)
    if (ws === null) throw serviceError('NOT_FOUND', ['Workspace'])
    return ws
  }

  type Deliver = (inv: InvitationRow, token: string, reinvite: boolean) => Promise<InviteResult>

  /**
   * Runs `work` on one e-mail of the workspace's budget: drawn before anything is written (a 429
   * changes nothing), given back unless the invitation was handed to the SMTP server or the
   * identity provider — a refused request (409, 404) or a failed send does not count.
   */
  async function onBudget (
    actor: Principal,
    ws: { id: string, name: string, workosOrganizationId: string | null },
    work: (deliver: Deliver) => Promise<InviteResult>
  ): Promise<InviteResult> {
    await ports.invitationBudget.take(ws.id)
    let handedOver = false
    const deliver: Deliver = async (inv, token, reinvite) => await deliverInvitation(
      { db, clock, config, log, mailer: ports.mailer, idp },
      {
        workspace: ws,
        invitation: inv,
        token,
        inviter: inviterOf(actor),
        reinvite,
        handedOver: () => { handedOver = true }
      })
    try {
      return await work(deliver)
    } catch (err) {
      if (!handedOver) {
        await ports.invitationBudget.refund(ws.id).catch((e: Error) => {
          log.warn(
            { err: e.message }, 'could not refund the invitation-e-mail budget'
          )
        })
      }
      throw err
    }
  }

  async function runInvite (actor: Principal, email: string, role: Role): Promise<InviteResult> {
    const ws = await workspaceOf(actor)
    return await onBudget(actor, ws, async deliver => {
      const token = randomToken(32)
      // The invitation is committed before anything is sent: a failed send leaves a row that
      // records the failure, and a retry re-sends this same invitation. Rotation and send are
      // ordered by the send lease, taken by the upsert itself.
      return await underSendLease(async (sendLease, now) => await db.transaction(async tx => {
        if (await findUserByEmail(tx, email) !== null) throw serviceError('USER_EXISTS')
        await expireStalePendingInvitation(tx, ws.id, email, now)
        const row = await upsertPendingInvitation(tx, {
          workspaceId: ws.id,
          email,
          role,
          tokenHash: hashToken(token),
          expiresAt: new Date(now.getTime() + ttlMs),
          invitedBy: actor.kind === 'apiKey' ? null : actor.userId,
          invitedByApiKey: actor.apiKeyId,
          now
        }, sendLease)
        if (row === null) return null
        await insertAuditEvent(tx, {
          workspaceId: ws.id,
          action: row.created ? 'invitation.created' : 'invitation.resent',
          actor: auditActorOf(actor),
          target: { type: 'invitation', id: row.id },
          payload: { email, role },
          now
        })
        return row
      }), async inv => await deliver(inv, token, !inv.created))
    })
  }

  return {
    async invite (actor, input, opts = {}) {
      // The last gate before the mailer, whoever calls (REST, MCP, the chat bot): one rule.
      const email = emailAddress(input.email)
      const role = input.role
      if (opts.idempotency === undefined) return await runInvite(actor, email, role)
      // "The same body" is the normalized input: `A@X.example` and `a@x.example` are one request.
      return await idempotency.run(
        { workspaceId: actor.workspaceId, ...opts.idempotency, request: [email, role] },
        async () => await runInvite(actor, email, role)
      )
    },

    async list (actor, q) {
      const now = clock.now()
      const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
      const rows = await listInvitations(
        db, { workspaceId: actor.workspaceId, status: q.status, now, limit: q.limit + 1, before }
      )
      const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: new Date(r.createdAt), id: r.id }))
      return { items: page.map(r => toInvitationView(r, now)), nextCursor }
    },

    async resend (actor, invitationId) {
      const ws = await workspaceOf(actor)
      return await onBudget(actor, ws, async deliver => {
        const token = randomToken(32)
        return await underSendLease(async (sendLease, now) => await db.transaction(async tx => {
          const current = await findInvitation(tx, ws.id, invitationId)
          if (current === null) throw serviceError('NOT_FOUND', ['Invitation'])
          const status = effectiveStatus(current, now)
          if (status !== 'pending') throw serviceError('INVITATION_NOT_PENDING', [status])
          if (await findUserByEmail(tx, current.email) !== null) throw serviceError('USER_EXISTS')
          if (!await takeSendLease(tx, current.id, sendLease, now)) return null
          const row = await refreshInvitationToken(
            tx, current.id, hashToken(token), new Date(now.getTime() + ttlMs), now
          )
          // Accepted or revoked between the read and the update.
          if (row === null) throw serviceError('INVITATION_NOT_PENDING', ['no longer'])
          await insertAuditEvent(tx, {
            workspaceId: ws.id,
            action: 'invitation.resent',
            actor: auditActorOf(actor),
            target: {
              type: 'invitation',
              id: row.id
            },
            payload: { email: row.email, role: row.role },
            now
          })
          return row
        }), async inv => await deliver(inv, token, true))
      })
    },

    async revoke (actor, invitationId) {
      const now = clock.now()
      const row = await db.transaction(async (tx: Queryable) => {
        const revoked = await markInvitationRevoked(tx, actor.workspaceId, invitationId, now)
        if (revoked === null) {
          const current = await findInvitation(tx, actor.workspaceId, invitationId)
          if (current === null) throw serviceError('NOT_FOUND', ['Invitation'])
          throw serviceError('INVITATION_NOT_PENDING', [effectiveStatus(current, now)])
        }
        await insertAuditEvent(tx, {
          workspaceId: actor.workspaceId,
          action: 'invitation.revoked',
          actor: auditActorOf(actor),
          target: {
            type: 'invitation',
            id: revoked.id
          },
          payload: { email: revoked.email },
          now
        })
        return revoked
      })
      // The provider's copy of the invitation would still let the person in: tell it (bounded,
      // best effort; our row is already revoked either way).
      if (row.idpInvitationId !== null && idp.kind !== 'none') {
        const told = await idp.revoke(row.idpInvitationId)
        if (!told) {
          log.warn(
            { invitationId: row.id }, 'revoking the invitation at the identity provider failed; it is revoked here'
          )
        }
      }
      return toInvitationView(row, now)
    }
  }
}
