import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { listWebhookEndpoints } from '../db/webhook-endpoints.js'
import type { DeliveryStatus } from '../db/webhook-deliveries.js'
import { endpointView, type DeliveryView, type EndpointView, type WebhookEndpointDeps } from './endpoint-context.js'
import { createEndpoint } from './endpoint-create.js'
import { removeEndpoint, updateEndpoint } from './endpoint-change.js'
import { rotateEndpointSecret } from './endpoint-secret.js'
import { listEndpointDeliveries, retryDelivery, testEndpoint } from './endpoint-deliveries.js'

// A workspace's webhook endpoints, one file per operation (endpoint-create.ts, endpoint-change.ts,
// endpoint-secret.ts, endpoint-deliveries.ts) over what they share (endpoint-context.ts).

type Schemas = components['schemas']

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
  /** Send a `webhook.test` event to this endpoint alone, through the normal delivery path. */
  test(actor: Principal, endpointId: string): Promise<DeliveryView>
}

export function createWebhookEndpointService (deps: WebhookEndpointDeps): WebhookEndpointService {
  return {
    create: async (actor, input) => await createEndpoint(deps, actor, input),
    list: async actor => (await listWebhookEndpoints(deps.db, actor.workspaceId)).map(endpointView),
    update: async (actor, endpointId, change) => await updateEndpoint(deps, actor, endpointId, change),
    remove: async (actor, endpointId) => { await removeEndpoint(deps, actor, endpointId) },
    rotateSecret: async (actor, endpointId) => await rotateEndpointSecret(deps, actor, endpointId),
    deliveries: async (actor, endpointId, q) => await listEndpointDeliveries(deps, actor, endpointId, q),
    retry: async (actor, deliveryId) => await retryDelivery(deps, actor, deliveryId),
    test: async (actor, endpointId) => await testEndpoint(deps, actor, endpointId)
  }
}
