import type { components } from '../generated/openapi.js'
import type { Clock } from '../clock.js'
import type { Config } from '../config.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Mailer } from '../ports/mailer.js'
import type { WorkspaceRow } from '../db/workspaces.js'
import { findUserInWorkspace } from '../db/users.js'
import type { AuditActor } from '../db/audit-events.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import { systemActor } from '../audit/actor.js'
import { markInvitationRevoked, recordDelivery, type InvitationRow } from '../db/invitations.js'
import { serviceError } from '../errors.js'
import type { IdentityProviderInvitations } from '../idp/invitations.js'
import { noopMeter, type Meter } from '../lib/telemetry.js'
import { invitationEmail, signupLink } from './email.js'
import { sealToken } from './link-seal.js'
import { tellInviter } from './inviter-notice.js'
import type { InviterNoticeListener } from '../ports/inviter-notices.js'
import { invitationReturnPath } from '../mail/return-path.js'
import { readerFor } from '../emails/reader.js'

// Getting a committed invitation to the invitee: through the identity provider when it is
// configured for the workspace and answers, otherwise by our own e-mail with a signup link.
// The row records how it went; a failed e-mail is audited and answered with EMAIL_SEND_FAILED.

export interface Inviter {
  /** Shown in the e-mail; null when nobody invited (create-admin). */
  name: string | null
  audit: AuditActor
  /** Local user id of the inviting person, if any (its WorkOS id is passed to the provider). */
  userId: string | null
}

export interface DeliveryDeps {
  db: Database
  clock: Clock
  config: Config
  log: Logger
  mailer: Mailer
  idp: IdentityProviderInvitations
  events: EventOutbox
  inviterNotices?: InviterNoticeListener | undefined
  /** Counts each delivery attempt by path and outcome (create-admin has none). */
  meter?: Meter
}

/** The contract's InviteUserResponse: what an invite or a re-send answers once delivered. */
export type InviteResult = components['schemas']['InviteUserResponse']

const SYSTEM: AuditActor = systemActor('identity provider')

/** One committed invitation to deliver, and by whom. */
interface Delivery {
  workspace: Pick<WorkspaceRow, 'id' | 'name' | 'workosOrganizationId'>
  invitation: InvitationRow
  token: string
  inviter: Inviter
  reinvite: boolean
  /** Called once the invitation left us (the IdP created it, or the SMTP server accepted the e-mail). */
  handedOver?: () => void
  /**
   * How a delivery that left us is written, when the caller writes it (a batch: its chunk's
   * deliveries together, each with its row settled and its send lease given back, in one
   * statement); otherwise recordDelivery, on its own.
   */
  recordSent?: (delivery: SentDelivery) => Promise<void>
}

/** What recordDelivery writes for an invitation that left us. */
interface SentDelivery {
  status: 'sent' | 'identity_provider'
  idpInvitationId?: string
  linkSealed?: string
  now: Date
}

/** Records a delivery that left us, the caller's way if it has one. */
async function recordSent (db: Database, d: Delivery, delivery: SentDelivery): Promise<void> {
  if (d.recordSent !== undefined) await d.recordSent(delivery)
  else await recordDelivery(db, d.invitation.id, delivery)
}

export async function deliverInvitation (deps: DeliveryDeps, d: Delivery): Promise<InviteResult> {
  const again = d.reinvite ? 're-sent' : 'sent'
  // Path 1: the identity provider's invitation, into the workspace's organization.
  const organizationId = d.workspace.workosOrganizationId
  if (deps.idp.kind !== 'none' && organizationId !== null) {
    const result = await throughIdentityProvider(deps, d, organizationId, again)
    if (result !== null) return result
  }
  // Path 2 (fallback): our own e-mail with the signup link on APP_URL.
  return await byEmail(deps, d, again)
}

/** The provider's invitation; null when it is unavailable (the caller falls back to e-mail). */
async function throughIdentityProvider (
  deps: DeliveryDeps,
  d: Delivery,
  organizationId: string,
  again: string
): Promise<InviteResult | null> {
  const { db, clock, config, log, idp } = deps
  const meter = deps.meter ?? noopMeter
  const inv = d.invitation
  const inviter = d.inviter.userId !== null ? await findUserInWorkspace(db, d.workspace.id, d.inviter.userId) : null
  const outcome = inv.idpInvitationId !== null
    ? await idp.resend(inv.idpInvitationId)
    : await idp.send({
      email: inv.email,
      organizationId,
      role: inv.role,
      inviterUserId: inviter?.workosUserId ?? null,
      expiresInDays: config.invitationTtlDays
    })
  if (outcome.kind === 'sent') {
    meter.invitationDelivery('identity_provider', 'sent')
    d.handedOver?.()
    await recordSent(db, d, { status: 'identity_provider', idpInvitationId: outcome.invitationId, now: clock.now() })
    return {
      success: true,
      outcome: d.reinvite ? 'resent' : 'invited',
      message: `Invitation ${again} to ${inv.email} through the identity provider`,
      invitationId: outcome.invitationId
    }
  }
  if (outcome.kind === 'user_exists') {
    // The provider knows this person already: our invitation is moot. Revoked (not deleted)
    // so the audit trail shows what happened to the invitation it recorded as created.
    const now = clock.now()
    await db.transaction(async tx => {
      const revoked = await markInvitationRevoked(tx, d.workspace.id, inv.id, now)
      if (revoked !== null) {
        await deps.events.record(tx, {
          workspaceId: d.workspace.id,
          action: 'invitation.revoked',
          actor: SYSTEM,
          target: {
            type: 'invitation',
            id: inv.id
          },
          payload: { email: inv.email, reason: 'identity_provider_user_exists' },
          now
        })
      }
    })
    throw serviceError('USER_EXISTS')
  }
  meter.invitationDelivery('identity_provider', 'failed')
  log.warn(
    { invitationId: inv.id, reason: outcome.reason },
    'identity provider invitation unavailable; sending the invitation e-mail ourselves'
  )
  return null
}

/** Our own e-mail; a failed send is recorded, audited, told to the inviter and EMAIL_SEND_FAILED. */
async function byEmail (deps: DeliveryDeps, d: Delivery, again: string): Promise<InviteResult> {
  const { db, clock, config, log, mailer } = deps
  const meter = deps.meter ?? noopMeter
  const inv = d.invitation
  const link = signupLink(config.appUrl, d.token)
  // When this send began: its Date header and the invitation's last_sent_at, so a bounce report
  // about an earlier e-mail (an older Date) is told from one about this one (src/bounces/record.ts).
  const startedAt = clock.now()
  try {
    // The invitee reads it in the invitation's language (kept for every resend), else the workspace's.
    const reader = await readerFor(db, config, d.workspace.id, inv.locale)
    await mailer.send({
      ...invitationEmail(reader, {
        to: inv.email,
        inviter: d.inviter.name,
        role: inv.role,
        link,
        expiresAt: inv.expiresAt
      }),
      // Bounces come back to the invitation's own signed address (BOUNCE_DOMAIN; src/bounces).
      returnPath: invitationReturnPath(config, inv.id),
      date: startedAt
    })
  } catch (err) {
    meter.invitationDelivery('email', 'failed')
    const reason = (err instanceof Error ? err.message : String(err)).slice(0, 500)
    log.warn({ invitationId: inv.id, err: reason }, 'sending the invitation e-mail failed')
    const now = clock.now()
    await db.transaction(async tx => {
      await recordDelivery(tx, inv.id, { status: 'failed', error: reason, now })
      await deps.events.record(tx, {
        workspaceId: d.workspace.id,
        action: 'invitation.email_failed',
        actor: d.inviter.audit,
        target: {
          type: 'invitation',
          id: inv.id
        },
        payload: { email: inv.email, deliveryStatus: 'failed' },
        now
      })
    })
    tellInviter(deps, {
      kind: 'delivery_failed',
      workspaceId: d.workspace.id,
      invitationId: inv.id,
      inviterId: d.inviter.userId,
      email: inv.email
    })
    throw serviceError('EMAIL_SEND_FAILED')
  }
  meter.invitationDelivery('email', 'sent')
  d.handedOver?.()
  // The link it carried, sealed: the reminder sends this same link (reminders.ts).
  await recordSent(db, d, { status: 'sent', linkSealed: sealToken(config, inv.id, d.token), now: startedAt })
  return {
    success: true,
    outcome: d.reinvite ? 'resent' : 'invited',
    message: `Invitation ${again} to ${inv.email}`,
    invitationUrl: link
  }
}
