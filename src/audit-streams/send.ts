import type { AuditStreamRow } from '../db/audit-streams.js'
import { postWebhook, type AttemptOutcome } from '../webhooks/sender.js'
import { openCredential } from './credentials.js'
import { batchRequest } from './formats.js'
import type { CloudEvent } from './envelope.js'
import type { AuditStreamDeps } from './context.js'

/**
 * One POST of `events` to the stream's receiver in its format, with its credential, through the
 * webhooks' sender: one deadline (WEBHOOK_TIMEOUT_MS), the address policy on the connection
 * itself, no redirects followed.
 */
export async function sendToStream (
  deps: Pick<AuditStreamDeps, 'key' | 'policy' | 'config'>, stream: AuditStreamRow, events: readonly CloudEvent[]
): Promise<AttemptOutcome> {
  const credential = openCredential(deps.key, stream.id, stream.credentialEnc)
  // The receiver checks a signature's timestamp against its own wall clock: the real time.
  const request = batchRequest(stream.kind, credential, events, Math.floor(Date.now() / 1000))
  return await postWebhook({
    url: stream.url,
    headers: request.headers,
    body: request.body,
    timeoutMs: deps.config.webhooks.timeoutMs,
    policy: deps.policy
  })
}

export const succeeded = (o: AttemptOutcome): boolean => o.kind === 'answered' && o.status >= 200 && o.status < 300
