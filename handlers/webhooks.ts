import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function webhookHandlers ({ services }: HandlerDeps): HandlerGroup<
  'getEvents' | 'postWebhookEndpoints' | 'getWebhookEndpoints' | 'patchWebhookEndpointsEndpointId' |
  'deleteWebhookEndpointsEndpointId' | 'postWebhookEndpointsEndpointIdRotateSecret' |
  'getWebhookEndpointsEndpointIdDeliveries' | 'postWebhookDeliveriesDeliveryIdRetry' |
  'postWebhookEndpointsEndpointIdTest'
> {
  return {
    async getEvents (request) {
      const { after, types, limit } = request.query
      return await services.events.list(principalOf(request).workspaceId, { after, types, limit: limit ?? 50 })
    },
    async postWebhookEndpoints (request, reply) {
      const created = await services.webhooks.create(principalOf(request), request.body)
      // The signing secret is in this one answer only; keep it out of any shared cache.
      return await reply.header('cache-control', 'no-store').code(201).send(created)
    },
    async getWebhookEndpoints (request) {
      return { items: await services.webhooks.list(principalOf(request)) }
    },
    async patchWebhookEndpointsEndpointId (request) {
      return await services.webhooks.update(principalOf(request), request.params.endpointId, request.body)
    },
    async deleteWebhookEndpointsEndpointId (request, reply) {
      await services.webhooks.remove(principalOf(request), request.params.endpointId)
      return await reply.code(204).send()
    },
    async postWebhookEndpointsEndpointIdRotateSecret (request, reply) {
      const rotated = await services.webhooks.rotateSecret(principalOf(request), request.params.endpointId)
      return await reply.header('cache-control', 'no-store').code(200).send(rotated)
    },
    async getWebhookEndpointsEndpointIdDeliveries (request) {
      const { status, limit, cursor } = request.query
      return await services.webhooks.deliveries(
        principalOf(request), request.params.endpointId, { status, limit: limit ?? 50, cursor }
      )
    },
    async postWebhookDeliveriesDeliveryIdRetry (request, reply) {
      const delivery = await services.webhooks.retry(principalOf(request), request.params.deliveryId)
      return await reply.code(202).send(delivery)
    },
    async postWebhookEndpointsEndpointIdTest (request, reply) {
      const delivery = await services.webhooks.test(principalOf(request), request.params.endpointId)
      return await reply.code(202).send(delivery)
    }
  }
}
