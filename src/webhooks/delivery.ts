import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { findEvent, type EventType } from '../db/audit-events.js'
import { disableWebhookEndpoint, findWebhookEndpoint, recordEndpointOutcome } from '../db/webhook-endpoints.js'
import { findDeliveryById, recordAttempt, type WebhookDeliveryRow } from '../db/webhook-deliveries.js'
import { systemActor } from '../audit/actor.js'
import { eventIdOf, toEventView } from '../events/catalogue.js'
import { signingSecrets } from './secrets.js'
import { signatureHeader } from './signing.js'
import { postWebhook, type AttemptOutcome } from './sender.js'
import type { AddressPolicy } from './address-policy.js'
import type { Keyring } from '../lib/crypto.js'

// One delivery attempt per job. The job names the attempt it is for; a job for an attempt that
// was already made (a duplicate after a crash, a manual retry racing the schedule) does nothing.
// The HTTP call runs outside any transaction; its outcome, the next attempt's job and any
// disabling are written in one transaction afterwards. A crash between the call and that write
// repeats the attempt with the same webhook-id: at-least-once, which receivers dedupe by id.

interface DeliveryJob { deliveryId: string, attempt: number }

export type WebhookDeliveryDeps = Pick<Ports, 'db' | 'clock' | 'log' | 'jobs' | 'events' | 'config'> & {
  /** The key the endpoints' signing secrets are encrypted with. */
  key: Keyring
  policy: AddressPolicy
}

// Retry-After is honoured up to the longest wait of the schedule.
const MAX_RETRY_AFTER_MS = 36_000_000

/** ±20 % so that deliveries failed together do not come back together. */
function jittered (ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4))
}

function isDeliveryJob (data: unknown): data is DeliveryJob {
  const d = data as Partial<DeliveryJob> | null
  return typeof d?.deliveryId === 'string' && typeof d.attempt === 'number'
}

export function createWebhookDelivery (deps: WebhookDeliveryDeps): { attempt(data: unknown): Promise<void> } {
  const { db, clock, log } = deps
  const config = deps.config.webhooks

  async function disable (tx: Queryable, d: WebhookDeliveryRow, reason: 'gone' | 'failing', now: Date): Promise<void> {
    if (!await disableWebhookEndpoint(tx, d.endpointId, reason, now)) return
    // The workspace's admins learn it from the audit trail (and whatever hooks the outbox).
    await deps.events.record(tx, {
      workspaceId: d.workspaceId,
      action: 'webhook_endpoint.disabled',
      actor: systemActor('webhook delivery'),
      target: { type: 'webhook_endpoint', id: d.endpointId },
      payload: { reason },
      now
    })
    log.warn({ endpointId: d.endpointId, reason }, 'webhook endpoint disabled')
  }

  async function record (job: DeliveryJob, outcome: AttemptOutcome, opts: { final: boolean }): Promise<void> {
    await db.transaction(async tx => {
      const d = await findDeliveryById(tx, job.deliveryId, { forUpdate: true })
      if (d === null || d.status !== 'pending' || d.attempts !== job.attempt) return
      const now = clock.now()
      const statusCode = outcome.kind === 'answered' ? outcome.status : null
      const error = outcome.kind === 'failed' ? outcome.error : null
      if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
        await recordAttempt(tx, d.id, { status: 'succeeded', statusCode, error, nextAttemptAt: null, now })
        await recordEndpointOutcome(tx, d.endpointId, true, now)
        return
      }
      if (statusCode === 410) {
        await recordAttempt(tx, d.id, { status: 'failed', statusCode, error, nextAttemptAt: null, now })
        await disable(tx, d, 'gone', now)
        return
      }
      const failingSince = opts.final ? null : await recordEndpointOutcome(tx, d.endpointId, false, now)
      if (failingSince !== null && now.getTime() - failingSince.getTime() >= config.disableAfterMs) {
        await recordAttempt(tx, d.id, { status: 'failed', statusCode, error, nextAttemptAt: null, now })
        await disable(tx, d, 'failing', now)
        return
      }
      const wait = opts.final ? undefined : config.retryDelaysMs[d.attempts]
      if (wait === undefined) {
        await recordAttempt(tx, d.id, { status: 'failed', statusCode, error, nextAttemptAt: null, now })
        return
      }
      const retryAfter = outcome.kind === 'answered' ? outcome.retryAfterMs : null
      const delayMs = Math.max(jittered(wait), Math.min(retryAfter ?? 0, MAX_RETRY_AFTER_MS))
      const nextAttemptAt = new Date(now.getTime() + delayMs)
      await recordAttempt(tx, d.id, { status: 'pending', statusCode, error, nextAttemptAt, now })
      await deps.jobs.send(tx, 'webhook-delivery', { deliveryId: d.id, attempt: d.attempts + 1 }, { delayMs })
    })
  }

  async function send (
    d: WebhookDeliveryRow,
    endpoint: NonNullable<Awaited<ReturnType<typeof findWebhookEndpoint>>>,
    event: NonNullable<Awaited<ReturnType<typeof findEvent>>>
  ): Promise<AttemptOutcome> {
    const now = clock.now()
    // The delivery's type: the event's own, or `webhook.test` for a test sent to this endpoint alone.
    const body = JSON.stringify(toEventView({ ...event, type: d.eventType as EventType }))
    const msgId = eventIdOf(event.id)
    // The receiver checks webhook-timestamp against its own wall clock (replay window), so it is
    // the real time of sending, not the service's clock (which tests move).
    const timestamp = Math.floor(Date.now() / 1000)
    return await postWebhook({
      url: endpoint.url,
      body,
      timeoutMs: config.timeoutMs,
      policy: deps.policy,
      headers: {
        'webhook-id': msgId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signatureHeader(signingSecrets(deps.key, endpoint, now), msgId, timestamp, body),
        'user-agent': 'workspace-service-webhooks'
      }
    })
  }

  return {
    async attempt (data) {
      if (!isDeliveryJob(data)) return
      const d = await findDeliveryById(db, data.deliveryId)
      if (d === null || d.status !== 'pending' || d.attempts !== data.attempt) return
      const endpoint = await findWebhookEndpoint(db, d.workspaceId, d.endpointId)
      const event = await findEvent(db, d.eventId)
      if (endpoint === null || event === null) return
      // A disabled endpoint's delivery fails at once (an admin re-enables it, then retries).
      if (!endpoint.enabled) {
        await record(data, { kind: 'failed', error: 'endpoint disabled' }, { final: true })
        return
      }
      await record(data, await send(d, endpoint, event), { final: false })
    }
  }
}
