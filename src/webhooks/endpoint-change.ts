import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { auditActorOf } from '../audit/actor.js'
import { deleteWebhookEndpoint, updateWebhookEndpoint } from '../db/webhook-endpoints.js'
import { allowedUrl, endpointView, type EndpointView, type WebhookEndpointDeps } from './endpoint-context.js'

/** Changes the fields given (a new URL passes the address policy first); audited with their names. */
export async function updateEndpoint (
  deps: WebhookEndpointDeps,
  actor: Principal,
  endpointId: string,
  change: components['schemas']['UpdateWebhookEndpointRequest']
): Promise<EndpointView> {
  if (change.url !== undefined) await allowedUrl(deps, change.url)
  const row = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
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
}

export async function removeEndpoint (
  deps: Pick<Ports, 'db' | 'clock' | 'events'>,
  actor: Principal,
  endpointId: string
): Promise<void> {
  await deps.db.transaction(async tx => {
    if (!await deleteWebhookEndpoint(tx, actor.workspaceId, endpointId)) {
      throw serviceError('NOT_FOUND', ['Webhook endpoint'])
    }
    await deps.events.record(tx, {
      workspaceId: actor.workspaceId,
      action: 'webhook_endpoint.deleted',
      actor: auditActorOf(actor),
      target: { type: 'webhook_endpoint', id: endpointId },
      now: deps.clock.now()
    })
  })
}
