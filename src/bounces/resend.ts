import type { components } from '../generated/openapi.js'
import { serviceError } from '../errors.js'
import { findEmailedPendingInvitations } from '../db/invitations.js'
import { rememberEmailEventDelivery } from '../db/email-event-deliveries.js'
import { storedAddress } from '../lib/email.js'
import { signatureVerifies, type SignedDelivery } from '../webhooks/signing.js'
import {
  applyDeliveryReport, tellBounced, type Applied, type BounceDeps, type DeliveryReport, type ReportOutcome
} from './record.js'

// Resend's webhook (POST /api/email-events/resend): signed by Svix, which is the Standard
// Webhooks scheme this service signs its own deliveries with (src/webhooks/signing.ts verifies
// it). Nothing is read from the body before the signature over its raw bytes verifies; an
// unsigned, forged or stale delivery is 401 and changes nothing. `email.bounced` of type
// Permanent bounces the invitation; other bounces and `email.delivery_delayed` are temporary.
// A delivery is applied once: its id (svix-id) is remembered in the transaction that applies it,
// for longer than its signature verifies, so a replay inside that window changes nothing more.
// The report is about the e-mail Resend made at `data.created_at`: an invitation re-sent since is
// not bounced by it (record.ts).

type Ack = components['schemas']['EmailEventAck']
type ResendEvent = components['schemas']['ResendEmailEvent']

type Deps = BounceDeps & { config: { bounces: { resendSecret: string | null } } }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The invitation the e-mail was tagged with (`invitation_id`: an object of tags, or Resend's name/value list). */
function taggedInvitation (tags: unknown): string | null {
  const value = Array.isArray(tags)
    ? (tags as Array<{ name?: unknown, value?: unknown }>).find(t => t?.name === 'invitation_id')?.value
    : (tags as Record<string, unknown> | null | undefined)?.invitation_id
  return typeof value === 'string' && UUID.test(value.toLowerCase()) ? value.toLowerCase() : null
}

function firstRecipient (to: unknown): string | null {
  const first: unknown = Array.isArray(to) ? to[0] : to
  if (typeof first !== 'string') return null
  const angle = /<([^<>]+)>\s*$/.exec(first)
  return storedAddress((angle?.[1] ?? first).trim())
}

/** A time the payload gives, or undefined. */
function timeOf (v: unknown): Date | undefined {
  const at = typeof v === 'string' ? Date.parse(v) : NaN
  return Number.isNaN(at) ? undefined : new Date(at)
}

/** Signatures verify 5 minutes either way of the clock (signing.ts): ids are kept for longer than that span. */
const REMEMBER_MS = 15 * 60_000

function text (v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined
}

export async function receiveResendEvent (
  deps: Deps, delivery: SignedDelivery, event: ResendEvent
): Promise<Ack> {
  const secret = deps.config.bounces.resendSecret
  if (secret === null) {
    deps.log.warn('email events: a Resend webhook arrived but RESEND_WEBHOOK_SECRET is not set; refused')
    throw serviceError('SIGNATURE_INVALID')
  }
  if (!signatureVerifies(secret, delivery, Math.floor(deps.clock.now().getTime() / 1000))) {
    throw serviceError('SIGNATURE_INVALID')
  }
  const data = event.data
  const bounce = (data.bounce ?? {}) as Record<string, unknown>
  let permanent: boolean
  let reason: string
  if (event.type === 'email.bounced') {
    permanent = bounce.type === 'Permanent'
    reason = [text(bounce.type), text(bounce.subType), text(bounce.message)].filter(Boolean).join(': ')
  } else if (event.type === 'email.delivery_delayed') {
    permanent = false
    reason = 'delivery delayed (the provider retries)'
  } else {
    return { outcome: 'ignored', invitations: 0 }
  }
  const tagged = taggedInvitation(data.tags)
  const to = firstRecipient(data.to)
  // The e-mail's own creation time; else the event's (it cannot be about an e-mail made after it).
  const sentAt = timeOf(data.created_at) ?? timeOf(event.created_at)
  const via = 'e-mail provider (Resend)' as const
  const now = deps.clock.now()
  const done = await deps.db.transaction(async tx => {
    const first = await rememberEmailEventDelivery(tx, {
      provider: 'resend', deliveryId: delivery.id, now, forgetBefore: new Date(now.getTime() - REMEMBER_MS)
    })
    if (!first) return null
    const ids = tagged !== null
      ? [tagged]
      : to !== null ? (await findEmailedPendingInvitations(tx, to)).map(r => r.id) : []
    const out: Array<{ applied: Applied, report: DeliveryReport }> = []
    for (const invitationId of ids) {
      const report: DeliveryReport = { invitationId, permanent, reason, sentAt, via }
      out.push({ applied: await applyDeliveryReport(deps, tx, report), report })
    }
    return out
  })
  if (done === null) {
    deps.log.info({ deliveryId: delivery.id }, 'email events: a delivery applied already (a replay); ignored')
    return { outcome: 'ignored', invitations: 0 }
  }
  for (const { applied, report } of done) tellBounced(deps, applied, report)
  const outcomes = done.map(d => d.applied.outcome)
  const outcome: ReportOutcome = outcomes.includes('bounced')
    ? 'bounced'
    : outcomes.includes('recorded') ? 'recorded' : 'ignored'
  const changed = done.filter(d => d.applied.row !== null).length
  return { outcome, invitations: changed }
}
