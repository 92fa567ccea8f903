import { randomUUID } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { auditActorOf } from '../audit/actor.js'
import { auditStream, existingStream, type AuditStreamDeps } from './context.js'
import { CLOUDEVENT_TYPE_PREFIX, ocsfAttributes, streamSource, type CloudEvent } from './envelope.js'
import { sendToStream, succeeded } from './send.js'

/**
 * Sends one test record now, once, in the stream's format, and answers what the receiver said.
 * The record is not in the audit trail (its type ends in `.test`); the test itself is.
 */
export async function testStream (
  deps: AuditStreamDeps, actor: Principal, streamId: string
): Promise<components['schemas']['AuditStreamTestResult']> {
  const stream = await existingStream(deps, actor, streamId)
  const now = deps.clock.now()
  const who = auditActorOf(actor)
  const event: CloudEvent = {
    specversion: '1.0',
    id: randomUUID(),
    source: streamSource(deps.config.appUrl, actor.workspaceId),
    type: `${CLOUDEVENT_TYPE_PREFIX}test`,
    time: now.toISOString(),
    datacontenttype: 'application/json',
    subject: `audit_stream/${streamId}`,
    ...ocsfAttributes('audit_stream.tested'),
    data: {
      id: randomUUID(),
      action: 'audit_stream.tested',
      actor: { type: who.type, id: who.id, label: who.label },
      source: who.source,
      target: { type: 'audit_stream', id: streamId },
      payload: { test: true },
      createdAt: now.toISOString()
    }
  }
  const outcome = await sendToStream(deps, stream, [event])
  const result = {
    delivered: succeeded(outcome),
    statusCode: outcome.kind === 'answered' ? outcome.status : null,
    error: outcome.kind === 'failed' ? outcome.error : null
  }
  await deps.db.transaction(async tx => {
    await auditStream(deps, tx, {
      workspaceId: actor.workspaceId,
      action: 'audit_stream.tested',
      actor,
      streamId,
      payload: { delivered: result.delivered, statusCode: result.statusCode },
      now: deps.clock.now()
    })
  })
  return result
}
