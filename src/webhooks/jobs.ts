import type { JobDefinition } from '../ports/job-engine.js'
import { createWebhookDelivery, type WebhookDeliveryDeps } from './delivery.js'

/** Webhooks' job: one delivery attempt of an event to an endpoint (a throw retries it on the schedule). */
export function webhookJobs (deps: WebhookDeliveryDeps): JobDefinition[] {
  const delivery = createWebhookDelivery(deps)
  return [{ queue: 'webhook-delivery', run: async data => { await delivery.attempt(data) } }]
}
