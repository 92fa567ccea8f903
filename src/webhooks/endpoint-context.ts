import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { eventIdOf } from '../events/catalogue.js'
import { findWebhookEndpoint, type WebhookEndpointRow } from '../db/webhook-endpoints.js'
import type { WebhookDeliveryRow } from '../db/webhook-deliveries.js'
import type { AddressPolicy } from './address-policy.js'
import type { Keyring } from '../lib/crypto.js'

// What the endpoint operations share (endpoint-create.ts, endpoint-change.ts, endpoint-secret.ts,
// endpoint-deliveries.ts): their dependencies, the views of a row, the URL check and the lookup.

type Schemas = components['schemas']
export type EndpointView = Schemas['WebhookEndpoint']
export type DeliveryView = Schemas['WebhookDelivery']

export type WebhookEndpointDeps = Pick<Ports, 'db' | 'clock' | 'jobs' | 'events'> & {
  /** The key the endpoints' signing secrets are encrypted with. */
  key: Keyring
  policy: AddressPolicy
}

export function endpointView (e: WebhookEndpointRow): EndpointView {
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

export function deliveryView (d: WebhookDeliveryRow): DeliveryView {
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

/** The URL, when the address policy lets deliveries go there; WEBHOOK_URL_NOT_ALLOWED otherwise. */
export async function allowedUrl (deps: Pick<WebhookEndpointDeps, 'policy'>, url: string): Promise<string> {
  const refusal = await deps.policy.check(new URL(url))
  if (refusal !== null) throw serviceError('WEBHOOK_URL_NOT_ALLOWED', [refusal])
  return url
}

export async function existingEndpoint (
  deps: Pick<Ports, 'db'>,
  actor: Principal,
  endpointId: string
): Promise<WebhookEndpointRow> {
  const e = await findWebhookEndpoint(deps.db, actor.workspaceId, endpointId)
  if (e === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
  return e
}
