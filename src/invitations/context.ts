import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import { findWorkspace, type WorkspaceRow } from '../db/workspaces.js'
import type { Queryable } from '../db/client.js'
import type { InvitationRow, SendLease } from '../db/invitations.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { auditActorOf } from '../audit/actor.js'
import { createIdentityProviderInvitations, type IdentityProviderInvitations } from '../idp/invitations.js'
import { createSendLeases, type UnderSendLease, type UnderSendLeases } from './send-lease.js'
import { deliverInvitation, type InviteResult, type Inviter } from './delivery.js'

// What invite, resend and revoke share: the ports, the identity provider, the invitation's
// lifetime, the send lease, and the budgeted delivery both sending operations go through.

/** The ports the invitation operations use. */
export type InvitationPorts = Pick<Ports,
  'db' | 'clock' | 'config' | 'log' | 'mailer' | 'invitationBudget' | 'events' | 'inviterNotices' | 'meter'>

export interface InvitationContext {
  ports: InvitationPorts
  idp: IdentityProviderInvitations
  ttlMs: number
  underSendLease: UnderSendLease
  /** A chunk of a batch: many invitations' leases claimed, renewed and given back together. */
  underSendLeases: UnderSendLeases
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
    ...createSendLeases({ db, clock, log, leaseMs: config.idempotencyLeaseMs, waitMs })
  }
}

/** Delivers a committed invitation with its new token (`reinvite`: the e-mail says "again"). */
type Deliver = (inv: InvitationRow, token: string, reinvite: boolean) => Promise<InviteResult>

type Workspace = Pick<WorkspaceRow, 'id' | 'name' | 'workosOrganizationId'>

/** Who the e-mail and the audit trail name as inviting: the principal. */
export function inviterOf (p: Principal): Inviter {
  return { name: p.name ?? p.email, audit: auditActorOf(p), userId: p.kind === 'apiKey' ? null : p.userId }
}

/**
 * Runs `work` in the actor's workspace on one e-mail of its budget: drawn before anything is
 * written (a 429 changes nothing), given back unless the invitation was handed to the SMTP
 * server or the identity provider — a refused request (409, 404) or a failed send does not count.
 */
async function sendOnBudget (
  ctx: InvitationContext,
  actor: Principal,
  work: (ws: Workspace, deliver: Deliver) => Promise<InviteResult>
): Promise<InviteResult> {
  const { ports, idp } = ctx
  const { db, clock, config, log, mailer, invitationBudget } = ports
  const ws = await findWorkspace(db, actor.workspaceId)
  if (ws === null) throw workspaceGone()
  await invitationBudget.take(ws.id)
  let handedOver = false
  const deliver: Deliver = async (invitation, token, reinvite) => await deliverInvitation(
    {
      db,
      clock,
      config,
      log,
      mailer,
      idp,
      events: ports.events,
      inviterNotices: ports.inviterNotices,
      meter: ports.meter
    },
    { workspace: ws, invitation, token, inviter: inviterOf(actor), reinvite, handedOver: () => { handedOver = true } }
  )
  try {
    return await work(ws, deliver)
  } catch (err) {
    if (!handedOver) {
      await invitationBudget.refund(ws.id).catch((e: Error) => {
        log.warn({ err: e.message }, 'could not refund the invitation-e-mail budget')
      })
    }
    throw err
  }
}

/** What a rotation writes: the new token's hash and expiry, under this send lease. */
export interface Rotation {
  ws: Workspace
  /** The token the e-mail will carry (for a checkpoint; only its hash is stored on the row). */
  token: string
  tokenHash: string
  expiresAt: Date
  sendLease: SendLease
  now: Date
}

/**
 * The one path of invite and resend: on budget, a fresh token is written by `rotate` in one
 * transaction that takes the send lease (null: another request holds it; this one waits for
 * it), then delivered with `reinvite(row)` saying whether the e-mail says "again". The row is
 * committed before anything is sent: a failed send leaves a row that records the failure.
 * `token` is given only to deliver again a token an earlier attempt may have sent (invite.ts).
 */
export async function rotateAndSend<Row extends InvitationRow> (
  ctx: InvitationContext,
  actor: Principal,
  rotate: (tx: Queryable, rotation: Rotation) => Promise<Row | null>,
  reinvite: (row: Row) => boolean,
  token: string = randomToken(32)
): Promise<InviteResult> {
  const { ports: { db }, ttlMs, underSendLease } = ctx
  return await sendOnBudget(ctx, actor, async (ws, deliver) => {
    const tokenHash = hashToken(token)
    return await underSendLease(async (sendLease, now) => await db.transaction(async tx => await rotate(
      tx, { ws, token, tokenHash, expiresAt: new Date(now.getTime() + ttlMs), sendLease, now }
    )), async row => await deliver(row, token, reinvite(row)))
  })
}
