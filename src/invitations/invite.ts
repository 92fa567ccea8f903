import type { Principal } from '../principal.js'
import type { Role } from '../db/users.js'
import { refuseMemberAddress } from '../members/status.js'
import {
  expireStalePendingInvitation, findPendingInvitationWithToken, takeSendLease, upsertPendingInvitation,
  type InvitationRow
} from '../db/invitations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import type { IdempotentAttempt } from '../idempotency/idempotency.js'
import type { InviteResult } from './delivery.js'
import { recordExpiry } from './expiry.js'
import { rotateAndSend, type InvitationContext } from './context.js'

/** What a keyed invite records before its e-mail leaves: the link it carries, and its wording. */
interface SentLink { token: string, reinvite: boolean }

function sentLinkOf (checkpoint: unknown): SentLink | null {
  const c = checkpoint as Partial<SentLink> | null
  if (typeof c?.token !== 'string' || typeof c.reinvite !== 'boolean') return null
  return { token: c.token, reinvite: c.reinvite }
}

/**
 * Invite (or re-invite) a normalized e-mail into the actor's workspace, and send it. With an
 * Idempotency-Key, the link is recorded as the key's checkpoint in the transaction that makes it
 * (before the e-mail leaves); a retry of a run that failed after that point (the database went
 * away after the e-mail left, or the process died while sending) delivers that same link again
 * rather than a new one, so the e-mail the invitee may already hold keeps working.
 */
export async function inviteMember (
  ctx: InvitationContext, actor: Principal,
  { email, role, locale }: { email: string, role: Role, locale: string | null },
  keyed?: { key: string, attempt: IdempotentAttempt }
): Promise<InviteResult> {
  const earlier = sentLinkOf(keyed?.attempt.uncertain ?? null)
  if (earlier !== null) {
    const again = await deliverAgain(ctx, actor, email, earlier)
    // The invitation no longer carries the checkpoint's link: the retry invites afresh.
    if (again !== 'link gone') return again
  }
  const { events } = ctx.ports
  // A retry of a failed send re-sends the same pending invitation; the upsert takes the lease.
  return await rotateAndSend(ctx, actor, async (tx, { ws, token, tokenHash, expiresAt, sendLease, now }) => {
    await refuseMemberAddress(tx, ws.id, email)
    // Past its expiry but not yet swept: expired (with its event) before a new one is made.
    const stale = await expireStalePendingInvitation(tx, ws.id, email, now)
    if (stale !== null) await recordExpiry(tx, events, stale, now)
    const row = await upsertPendingInvitation(tx, {
      workspaceId: ws.id,
      email,
      role,
      tokenHash,
      expiresAt,
      invitedBy: actor.kind === 'apiKey' ? null : actor.userId,
      invitedByApiKey: actor.apiKeyId,
      locale,
      now
    }, sendLease)
    if (row === null) return 'busy'
    await auditPrincipalAction(events, tx, actor, {
      action: row.created ? 'invitation.created' : 'invitation.resent',
      target: { type: 'invitation', id: row.id },
      payload: { email, role },
      idempotencyKey: keyed?.key,
      now
    })
    await keyed?.attempt.checkpoint(tx, { token, reinvite: !row.created } satisfies SentLink)
    return row
  }, row => !row.created)
}

/**
 * The earlier run's link, delivered again under the send lease without rotating the token (its
 * audit event was recorded with it). 'link gone' when the invitation has moved on since
 * (accepted, revoked, expired, or given another link by another request).
 */
async function deliverAgain (
  ctx: InvitationContext, actor: Principal, email: string, earlier: SentLink
): Promise<InviteResult | 'link gone'> {
  return await rotateAndSend<InvitationRow, 'link gone'>(ctx, actor, async (tx, { ws, tokenHash, sendLease, now }) => {
    const row = await findPendingInvitationWithToken(tx, ws.id, email, tokenHash, now)
    if (row === null) return 'link gone'
    return await takeSendLease(tx, row.id, sendLease, now) ? row : 'busy'
  }, () => earlier.reinvite, earlier.token)
}
