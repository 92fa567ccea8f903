import type { Ports } from '../ports.js'
import { randomUUID } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { auditActorOf } from '../audit/actor.js'
import { eventIdOf } from '../events/catalogue.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import {
  deleteWebhookEndpoint, findWebhookEndpoint, insertWebhookEndpoint, listWebhookEndpoints, rotateWebhookSecret,
  updateWebhookEndpoint, type WebhookEndpointRow
} from '../db/webhook-endpoints.js'
import {
  findDelivery, listDeliveries, requeueDelivery, type DeliveryStatus, type WebhookDeliveryRow
} from '../db/webhook-deliveries.js'
import type { AddressPolicy } from './address-policy.js'
import { newWebhookSecret } from './signing.js'
import { sealSecret } from './secrets.js'

type Schemas = components['schemas']
type EndpointView = Schemas['WebhookEndpoint']
type DeliveryView = Schemas['WebhookDelivery']

// The old secret keeps signing beside the new one this long, so receivers can switch over.
const ROTATION_OVERLAP_MS = 86_400_000

export interface WebhookEndpointService {
  create(actor: Principal, input: Schemas['CreateWebhookEndpointRequest']): Promise<Schemas['WebhookEndpointCreated']>
  list(actor: Principal): Promise<EndpointView[]>
  update(actor: Principal, endpointId: string, change: Schemas['UpdateWebhookEndpointRequest']): Promise<EndpointView>
  remove(actor: Principal, endpointId: string): Promise<void>
  rotateSecret(actor: Principal, endpointId: string): Promise<Schemas['WebhookSecretRotated']>
  deliveries(actor: Principal, endpointId: string, q: {
    status?: DeliveryStatus | undefined, limit: number, cursor?: string | undefined
  }): Promise<Schemas['WebhookDeliveryList']>
  /** Attempt a delivery again now, with the same webhook-id. */
  retry(actor: Principal, deliveryId: string): Promise<DeliveryView>
}

function endpointView (e: WebhookEndpointRow): EndpointView {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes as EndpointView['eventTypes'],
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    failingSince: e.failingSince?.toISOString() ?? null,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString()
  }
}

function deliveryView (d: WebhookDeliveryRow): DeliveryView {
  return {
    id: d.id,
    endpointId: d.endpointId,
    eventId: eventIdOf(d.eventId),
    eventType: d.eventType as DeliveryView['eventType'],
    status: d.status,
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    nextAttemptAt: d.nextAttemptAt?.toISOString() ?? null,
    deliveredAt: d.deliveredAt?.toISOString() ?? null,
    createdAt: d.createdAt.toISOString()
  }
}

export function createWebhookEndpointService (
  deps: Pick<Ports, 'db' | 'clock' | 'jobs' | 'events'> & { key: Buffer, policy: AddressPolicy }
): WebhookEndpointService {
  const { db, clock, key } = deps

  async function allowed (url: string): Promise<string> {
    const refusal = await deps.policy.check(new URL(url))
    if (refusal !== null) throw serviceError('WEBHOOK_URL_NOT_ALLOWED', [refusal])
    return url
  }

  async function existing (actor: Principal, endpointId: string): Promise<WebhookEndpointRow> {
    const e = await findWebhookEndpoint(db, actor.workspaceId, endpointId)
    if (e === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
    return e
  }

  return {
    async create (actor, input) {
      const url = await allowed(input.url)
      const id = randomUUID()
      const secret = newWebhookSecret()
      const row = await db.transaction(async tx => {
        const now = clock.now()
        const e = await insertWebhookEndpoint(tx, {
          id,
          workspaceId: actor.workspaceId,
          url,
          description: input.description ?? null,
          eventTypes: input.eventTypes ?? null,
          secretEnc: sealSecret(key, id, secret),
          createdBy: actor.userId,
          now
        })
        await deps.events.record(tx, {
          workspaceId: actor.workspaceId,
          action: 'webhook_endpoint.created',
          actor: auditActorOf(actor),
          target: { type: 'webhook_endpoint', id },
          // Not the URL: its query string may hold the receiver's own credentials.
          payload: { host: new URL(url).host, eventTypes: input.eventTypes ?? null },
          now
        })
        return e
      })
      return { ...endpointView(row), secret }
    },

    async list (actor) {
      return (await listWebhookEndpoints(db, actor.workspaceId)).map(endpointView)
    },

    async update (actor, endpointId, change) {
      if (change.url !== undefined) await allowed(change.url)
      const row = await db.transaction(async tx => {
        const now = clock.now()
        const e = await updateWebhookEndpoint(tx, actor.workspaceId, endpointId, { ...change, now })
        if (e === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
        await deps.events.record(tx, {
          workspaceId: actor.workspaceId,
          action: 'webhook_endpoint.updated',
          actor: auditActorOf(actor),
          target: { type: 'webhook_endpoint', id: endpointId },
          payload: {
            fields: Object.keys(change), ...(change.enabled !== undefined ? { enabled: change.enabled } : {})
          },
          now
        })
        return e
      })
      return endpointView(row)
    },

    async remove (actor, endpointId) {
      await db.transaction(async tx => {
        if (!await deleteWebhookEndpoint(tx, actor.workspaceId, endpointId)) {
          throw serviceError('NOT_FOUND', ['Webhook endpoint'])
        }
        await deps.events.record(tx, {
          workspaceId: actor.workspaceId,
          action: 'webhook_endpoint.deleted',
          actor: auditActorOf(actor),
          target: { type: 'webhook_endpoint', id: endpointId },
          now: clock.now()
        })
      })
    },

    async rotateSecret (actor, endpointId) {
      const secret = newWebhookSecret()
      const until = await db.transaction(async tx => {
        const now = clock.now()
        const e = await findWebhookEndpoint(tx, actor.workspaceId, endpointId)
        if (e === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
        const previousUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS)
        await rotateWebhookSecret(tx, actor.workspaceId, endpointId, {
          secretEnc: sealSecret(key, endpointId, secret), previousSecretEnc: e.secretEnc, previousUntil, now
        })
        await deps.events.record(tx, {
          workspaceId: actor.workspaceId,
          action: 'webhook_endpoint.secret_rotated',
          actor: auditActorOf(actor),
          target: { type: 'webhook_endpoint', id: endpointId },
          now
        })
        return previousUntil
      })
      return { secret, previousSecretExpiresAt: until.toISOString() }
    },

    async deliveries (actor, endpointId, q) {
      await existing(actor, endpointId)
      const before = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined
      const rows = await listDeliveries(db, { endpointId, status: q.status, before, limit: q.limit + 1 })
      const { page, nextCursor } = pageOf(rows, q.limit, r => r)
      return { items: page.map(deliveryView), nextCursor }
    },

    async retry (actor, deliveryId) {
      const d = await findDelivery(db, actor.workspaceId, deliveryId)
      if (d === null) throw serviceError('NOT_FOUND', ['Webhook delivery'])
      const endpoint = await existing(actor, d.endpointId)
      if (!endpoint.enabled) throw serviceError('WEBHOOK_ENDPOINT_DISABLED')
      const row = await db.transaction(async tx => {
        const r = await requeueDelivery(tx, d.id, clock.now())
        await deps.jobs.send(tx, 'webhook-delivery', { deliveryId: r.id, attempt: r.attempts })
        return r
      })
      deps.jobs.wake('webhook-delivery')
      return deliveryView(row)
    }
  }
}
