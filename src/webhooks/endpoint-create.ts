import { randomUUID } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { auditActorOf } from '../audit/actor.js'
import { insertWebhookEndpoint } from '../db/webhook-endpoints.js'
import { newWebhookSecret } from './signing.js'
import { sealSecret } from './secrets.js'
import { allowedUrl, endpointView, type WebhookEndpointDeps } from './endpoint-context.js'

type Schemas = components['schemas']

/** A new endpoint and its signing secret, shown this once (stored sealed with the key). */
export async function createEndpoint (
  deps: WebhookEndpointDeps,
  actor: Principal,
  input: Schemas['CreateWebhookEndpointRequest']
): Promise<Schemas['WebhookEndpointCreated']> {
  const url = await allowedUrl(deps, input.url)
  const id = randomUUID()
  const secret = newWebhookSecret()
  const row = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const e = await insertWebhookEndpoint(tx, {
      id,
      workspaceId: actor.workspaceId,
      url,
      description: input.description ?? null,
      eventTypes: input.eventTypes ?? null,
      secretEnc: sealSecret(deps.key, id, secret),
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
}
