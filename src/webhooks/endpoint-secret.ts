import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { auditActorOf } from '../audit/actor.js'
import { findWebhookEndpoint, rotateWebhookSecret } from '../db/webhook-endpoints.js'
import { newWebhookSecret } from './signing.js'
import { sealSecret } from './secrets.js'
import type { WebhookEndpointDeps } from './endpoint-context.js'

// The old secret keeps signing beside the new one this long, so receivers can switch over.
const ROTATION_OVERLAP_MS = 86_400_000

export async function rotateEndpointSecret (
  deps: Pick<WebhookEndpointDeps, 'db' | 'clock' | 'events' | 'key'>,
  actor: Principal,
  endpointId: string
): Promise<components['schemas']['WebhookSecretRotated']> {
  const secret = newWebhookSecret()
  const until = await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const e = await findWebhookEndpoint(tx, actor.workspaceId, endpointId)
    if (e === null) throw serviceError('NOT_FOUND', ['Webhook endpoint'])
    const previousUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS)
    await rotateWebhookSecret(tx, actor.workspaceId, endpointId, {
      secretEnc: sealSecret(deps.key, endpointId, secret), previousSecretEnc: e.secretEnc, previousUntil, now
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
}
