import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import {
  findDelivery, insertDelivery, listDeliveries, requeueDelivery, type DeliveryStatus
} from '../db/webhook-deliveries.js'
import { findWebhookEndpoint } from '../db/webhook-endpoints.js'
import { auditActorOf } from '../audit/actor.js'
import { deliveryView, existingEndpoint, type DeliveryView } from './endpoint-context.js'

/** One page of an endpoint's deliveries, newest first. */
export async function listEndpointDeliveries (
  deps: Pick<Ports, 'db'>,
  actor: Principal,
  endpointId: string,
  q: { status?: DeliveryStatus | undefined, limit: number, cursor?: string | undefined }
): Promise<components['schemas']['WebhookDeliveryList']> {
  await existingEndpoint(deps, actor, endpointId)
  const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
  const rows = await listDeliveries(deps.db, { endpointId, status: q.status, before, limit: q.limit + 1 })
  const { page, nextCursor } = pageOf(rows, q.limit, r => r)
  return { items: page.map(deliveryView), nextCursor }
}

/** Attempt a delivery again now, with the same webhook-id. */
export async function retryDelivery (
  deps: Pick<Ports, 'db' | 'clock' | 'jobs'>,
  actor: Principal,
  deliveryId: string
): Promise<DeliveryView> {
  const d = await findDelivery(deps.db, actor.workspaceId, deliveryId)
  if (d === null) throw serviceError('NOT_FOUND', ['Webhook delivery'])
  const endpoint = await existingEndpoint(deps, actor, d.endpointId)
  if (!endpoint.enabled) throw serviceError('WEBHOOK_ENDPOINT_DISABLED')
  const row = await deps.db.transaction(async tx => {
    const r = await requeueDelivery(tx, d.id, deps.clock.now())
    await deps.jobs.send(tx, 'webhook-delivery', { deliveryId: r.id, attempt: r.attempts })
    return r
  })
  deps.jobs.wake('webhook-delivery')
  return deliveryView(row)
}

/**
 * A `webhook.test` event to this endpoint alone, whatever it subscribes to, through the normal
 * delivery path (signed, retried, listed in its deliveries). Its audit row is outside the
 * catalogue: in no feed, delivered to no other endpoint; the delivery names it as `webhook.test`.
 */
export async function testEndpoint (
  deps: Pick<Ports, 'db' | 'clock' | 'jobs' | 'events'>,
  actor: Principal,
  endpointId: string
): Promise<DeliveryView> {
  const row = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const endpoint = await findWebhookEndpoint(tx, actor.workspaceId, endpointId)
    if (endpoint === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
    if (!endpoint.enabled) throw serviceError('WEBHOOK_ENDPOINT_DISABLED')
    const eventId = await deps.events.record(tx, {
      workspaceId: actor.workspaceId,
      action: 'webhook_endpoint.tested',
      actor: auditActorOf(actor),
      target: { type: 'webhook_endpoint', id: endpointId },
      now
    })
    const d = await insertDelivery(
      tx, { endpointId, workspaceId: actor.workspaceId, eventId, eventType: 'webhook.test', now }
    )
    await deps.jobs.send(tx, 'webhook-delivery', { deliveryId: d.id, attempt: 0 })
    return d
  })
  deps.jobs.wake('webhook-delivery')
  return deliveryView(row)
}
