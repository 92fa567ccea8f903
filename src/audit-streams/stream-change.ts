import { randomUUID } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import {
  deleteAuditStream, insertAuditStream, setAuditStreamPaused, updateAuditStream, type AuditStreamKind
} from '../db/audit-streams.js'
import { allowedUrl } from '../webhooks/endpoint-context.js'
import { newWebhookSecret } from '../webhooks/signing.js'
import { sealCredential } from './credentials.js'
import {
  auditStream, existingStream, startChain, streamView, type AuditStreamDeps, type AuditStreamView
} from './context.js'

type Schemas = components['schemas']

/** A token for Splunk and Datadog, none for https (whose signing secret is made here): else VALIDATION_FAILED. */
function checkToken (kind: AuditStreamKind, token: string | undefined): void {
  const problem = kind === 'https'
    ? (token !== undefined ? 'is not taken by an https stream (its signing secret is made by the service)' : null)
    : (token === undefined ? `is required for a ${kind} stream` : null)
  if (problem !== null) {
    throw serviceError('VALIDATION_FAILED', [`body.token ${problem}`], {
      errors: [{ in: 'body', field: 'token', message: problem }]
    })
  }
}

/** A new stream, delivering what is recorded from now on; an https stream's secret is shown this once. */
export async function createStream (
  deps: AuditStreamDeps, actor: Principal, input: Schemas['CreateAuditStreamRequest']
): Promise<Schemas['AuditStreamCreated']> {
  checkToken(input.kind, input.token)
  const url = await allowedUrl(deps, input.url)
  const id = randomUUID()
  const secret = input.kind === 'https' ? newWebhookSecret() : null
  return await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const runToken = randomUUID()
    const row = await insertAuditStream(tx, {
      id,
      workspaceId: actor.workspaceId,
      kind: input.kind,
      name: input.name,
      url,
      credentialEnc: sealCredential(deps.key, id, secret ?? input.token ?? ''),
      runToken,
      createdBy: actor.userId,
      now
    })
    // Not the URL: its query string may hold the receiver's own credentials.
    await auditStream(deps, tx, {
      workspaceId: actor.workspaceId,
      action: 'audit_stream.created',
      actor,
      streamId: id,
      payload: { kind: input.kind, name: input.name, host: new URL(url).host },
      now
    })
    await startChain(deps, tx, id, runToken)
    return { ...await streamView(tx, row), secret }
  })
}

export async function updateStream (
  deps: AuditStreamDeps, actor: Principal, streamId: string, change: Schemas['UpdateAuditStreamRequest']
): Promise<AuditStreamView> {
  const current = await existingStream(deps, actor, streamId)
  if (change.token !== undefined) checkToken(current.kind, change.token)
  if (change.url !== undefined) await allowedUrl(deps, change.url)
  return await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    const row = await updateAuditStream(tx, actor.workspaceId, streamId, {
      name: change.name,
      url: change.url,
      credentialEnc: change.token !== undefined ? sealCredential(deps.key, streamId, change.token) : undefined,
      now
    })
    if (row === null) throw serviceError('NOT_FOUND', ['Audit stream'])
    await auditStream(deps, tx, {
      workspaceId: actor.workspaceId,
      action: 'audit_stream.updated',
      actor,
      streamId,
      payload: { fields: Object.keys(change) },
      now
    })
    return await streamView(tx, row)
  })
}

export async function removeStream (deps: AuditStreamDeps, actor: Principal, streamId: string): Promise<void> {
  await deps.db.transaction(async tx => {
    if (!await deleteAuditStream(tx, actor.workspaceId, streamId)) throw serviceError('NOT_FOUND', ['Audit stream'])
    await auditStream(deps, tx, {
      workspaceId: actor.workspaceId, action: 'audit_stream.deleted', actor, streamId, now: deps.clock.now()
    })
  })
}

/**
 * Pauses (`paused`) or resumes a stream; audited only when it changed. Resuming starts a new
 * delivery chain from the cursor: what was recorded meanwhile follows, in order.
 */
export async function setStreamPaused (
  deps: AuditStreamDeps, actor: Principal, streamId: string, paused: boolean
): Promise<AuditStreamView> {
  return await deps.db.transaction(async tx => {
    await existingStream(deps, actor, streamId, tx)
    const now = deps.clock.now()
    const runToken = paused ? null : randomUUID()
    if (await setAuditStreamPaused(tx, streamId, { pausedReason: paused ? 'admin' : null, runToken, now })) {
      await auditStream(deps, tx, {
        workspaceId: actor.workspaceId,
        action: paused ? 'audit_stream.paused' : 'audit_stream.resumed',
        actor,
        streamId,
        payload: { reason: 'admin' },
        now
      })
      if (runToken !== null) await startChain(deps, tx, streamId, runToken)
    }
    return await streamView(tx, await existingStream(deps, actor, streamId, tx))
  })
}
