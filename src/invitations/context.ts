import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import { findWorkspace, type WorkspaceRow } from '../db/workspaces.js'
import type { Queryable } from '../db/client.js'
import type { InvitationRow, SendLease } from '../db/invitations.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { auditActorOf } from '../audit/actor.js'
import { createIdentityProviderInvitations, type IdentityProviderInvitations } from '../idp/invitations.js'
import { createSendLeases, type Acquired, type SendLeases } from './send-lease.js'
import { deliverInvitation, type DeliveryDeps, type InviteResult, type Inviter } from './delivery.js'

// What invite, resend and revoke share: the ports, the identity provider, the invitation's
// lifetime, the send lease, and the budgeted delivery both sending operations go through.

/** The ports the invitation operations use. */
export type InvitationPorts = Pick<Ports,
  'db' | 'clock' | 'config' | 'log' | 'mailer' | 'invitationBudget' | 'events' | 'inviterNotices' | 'meter'>

export interface InvitationContext {
  ports: InvitationPorts
  idp: IdentityProviderInvitations
  ttlMs: number
  /** Each invitation's send lease: one waited for, or a batch chunk's taken together. */
  sendLeases: SendLeases
}

const DAY_MS = 86_400_000

export function createInvitationContext (
  ports: InvitationPorts,
  idpOverride?: IdentityProviderInvitations
): InvitationContext {
  const { db, clock, config, log } = ports
  // A request waits for another's send at most the longest delivery (the SMTP deadline, or the
  // identity provider's calls) plus margin; the lease itself is short and renewed while sending.
  const waitMs = Math.max(2 * config.smtp.timeoutMs, 3 * (config.workos?.timeoutMs ?? 0)) + 5_000
  return {
    ports,
    idp: idpOverride ?? createIdentityProviderInvitations(config),
    ttlMs: config.invitationTtlDays * DAY_MS,
    sendLeases: createSendLeases({ db, clock, log, leaseMs: config.idempotencyLeaseMs, waitMs })
  }
}

type Workspace = Pick<WorkspaceRow, 'id' | 'name' | 'workosOrganizationId'>

/** Who the e-mail and the audit trail name as inviting: the principal. */
export function inviterOf (p: Principal): Inviter {
  return { name: p.name ?? p.email, audit: auditActorOf(p), userId: p.kind === 'apiKey' ? null : p.userId }
}

/** What a rotation writes: the new token's hash and expiry, under this send lease. */
interface Rotation {
  ws: Workspace
  /** The token the e-mail will carry (for a checkpoint; only its hash is stored on the row). */
  token: string
  tokenHash: string
  expiresAt: Date
  sendLease: SendLease
  now: Date
}

/**
 * What a rotation answers: the row it rotated (having taken the send lease in its statement),
 * 'busy' (another send holds the lease), or what the invitation moved to (nothing to send).
 */
type Rotate<Row, Moved extends string> = (tx: Queryable, rotation: Rotation) => Promise<Row | 'busy' | NoInfer<Moved>>

/**
 * The one path of invite and resend: one e-mail of the budget drawn; a fresh token written by
 * `rotate` in one transaction that takes the send lease (waited for while another request holds
 * it); then delivered with `reinvite(row)` saying whether the e-mail says "again". The row is
 * committed before anything is sent: a failed send leaves a row that records the failure.
 * `token` is given only to deliver again a token an earlier attempt may have sent (invite.ts).
 */
export async function rotateAndSend<Row extends InvitationRow, Moved extends string = never> (
  ctx: InvitationContext,
  actor: Principal,
  rotate: Rotate<Row, Moved>,
  reinvite: (row: Row) => boolean,
  token: string = randomToken(32)
): Promise<InviteResult | NoInfer<Moved>> {
  const ws = await findWorkspace(ctx.ports.db, actor.workspaceId)
  if (ws === null) throw workspaceGone()
  const email = await drawOneEmail(ctx.ports, ws.id)
  try {
    const taken = await rotateUnderLease(ctx, ws, token, rotate)
    if ('moved' in taken) return taken.moved
    try {
      const { row } = taken
      const delivery = { workspace: ws, invitation: row, token, inviter: inviterOf(actor), reinvite: reinvite(row) }
      return await deliverInvitation(deliveryDeps(ctx), { ...delivery, handedOver: email.handedOver })
    } finally {
      await taken.lease.release()
    }
  } finally {
    await email.refundUnlessHandedOver()
  }
}

/** `rotate` in its own transaction, run again (after a wait) while another send holds the lease. */
async function rotateUnderLease<Row extends InvitationRow, Moved extends string> (
  ctx: InvitationContext, ws: Workspace, token: string, rotate: Rotate<Row, Moved>
): Promise<Acquired<Row, Moved>> {
  const tokenHash = hashToken(token)
  return await ctx.sendLeases.acquire<Row, Moved>(async (sendLease, now) => {
    const rotation = { ws, token, tokenHash, expiresAt: new Date(now.getTime() + ctx.ttlMs), sendLease, now }
    return await ctx.ports.db.transaction(async tx => await rotate(tx, rotation))
  })
}

/**
 * One e-mail of the workspace's budget, drawn before anything is written (a 429 changes nothing)
 * and given back unless the invitation was handed to the SMTP server or the identity provider:
 * a refused request (409, 404), an invitation that moved on or a failed send does not count.
 */
async function drawOneEmail (
  ports: InvitationPorts, workspaceId: string
): Promise<{ handedOver: () => void, refundUnlessHandedOver: () => Promise<void> }> {
  await ports.invitationBudget.take(workspaceId)
  let handedOver = false
  return {
    handedOver: () => { handedOver = true },
    refundUnlessHandedOver: async () => {
      if (handedOver) return
      await ports.invitationBudget.refund(workspaceId).catch((e: Error) => {
        ports.log.warn({ err: e.message }, 'could not refund the invitation-e-mail budget')
      })
    }
  }
}

/** What a delivery needs of the context. */
export function deliveryDeps ({ ports, idp }: InvitationContext): DeliveryDeps {
  const { db, clock, config, log, mailer, events, inviterNotices, meter } = ports
  return { db, clock, config, log, mailer, idp, events, inviterNotices, meter }
}
