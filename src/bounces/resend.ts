import type { components } from '../generated/openapi.js'
import { serviceError } from '../errors.js'
import { findEmailedPendingInvitations } from '../db/invitations.js'
import { signatureVerifies, type SignedDelivery } from '../webhooks/signing.js'
import { recordDeliveryReport, type BounceDeps, type ReportOutcome } from './record.js'

// Resend's webhook (POST /api/email-events/resend): signed by Svix, which is the Standard
// Webhooks scheme this service signs its own deliveries with (src/webhooks/signing.ts verifies
// it). Nothing is read from the body before the signature over its raw bytes verifies; an
// unsigned, forged or stale delivery is 401 and changes nothing. `email.bounced` of type
// Permanent bounces the invitation; other bounces and `email.delivery_delayed` are temporary.

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
  return (angle?.[1] ?? first).trim().toLowerCase()
}

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
  const at = Date.parse(event.created_at ?? '')
  const before = Number.isNaN(at) ? deps.clock.now() : new Date(at)
  const ids = tagged !== null
    ? [tagged]
    : to !== null ? (await findEmailedPendingInvitations(deps.db, to, before)).map(r => r.id) : []
  let changed = 0
  let outcome: ReportOutcome = 'ignored'
  for (const invitationId of ids) {
    const o = await recordDeliveryReport(deps, { invitationId, permanent, reason, via: 'e-mail provider (Resend)' })
    if (o !== 'ignored') { changed++; outcome = o }
  }
  return { outcome, invitations: changed }
}
