import type { Ports } from '../ports/index.js'
import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import type { Queryable } from '../db/client.js'
import type { AuditAction, AuditEntry } from '../db/audit-events.js'
import { serviceError } from '../errors.js'
import { auditActorOf } from '../audit/actor.js'
import { countRecordsAfter, findAuditStream, type AuditStreamRow } from '../db/audit-streams.js'
import type { AddressPolicy } from '../webhooks/address-policy.js'
import type { Keyring } from '../lib/crypto.js'

// What the stream operations share (stream-change.ts, stream-test.ts) and the delivery
// (delivery.ts): their dependencies, the view of a row with its lag, the lookup and the audit.

export type AuditStreamView = components['schemas']['AuditStream']

export type AuditStreamDeps = Pick<Ports, 'db' | 'clock' | 'jobs' | 'events' | 'config'> & {
  /** The key the streams' credentials are sealed with. */
  key: Keyring
  policy: AddressPolicy
}

/** The lag is counted up to this many records (the contract says so). */
const LAG_CAP = 10_000

export async function streamView (q: Queryable, s: AuditStreamRow): Promise<AuditStreamView> {
  return {
    id: s.id,
    kind: s.kind,
    name: s.name,
    url: s.url,
    status: s.status,
    pausedReason: s.pausedReason,
    lag: await countRecordsAfter(q, s.workspaceId, s.cursorSeq, LAG_CAP),
    lastDeliveryAt: s.lastDeliveryAt?.toISOString() ?? null,
    lastDeliveredRecordAt: s.lastDeliveredRecordAt?.toISOString() ?? null,
    lastStatusCode: s.lastStatusCode,
    lastError: s.lastError,
    failingSince: s.failingSince?.toISOString() ?? null,
    nextAttemptAt: s.nextAttemptAt?.toISOString() ?? null,
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString()
  }
}

export async function existingStream (
  deps: Pick<Ports, 'db'>, actor: Principal, streamId: string, q: Queryable = deps.db
): Promise<AuditStreamRow> {
  const s = await findAuditStream(q, actor.workspaceId, streamId)
  if (s === null) throw serviceError('NOT_FOUND', ['Audit stream'])
  return s
}

function streamTarget (id: string): AuditEntry['target'] {
  return { type: 'audit_stream', id }
}

/** Records what happened to a stream, in the change's transaction. */
export async function auditStream (deps: Pick<Ports, 'events'>, tx: Queryable, e: {
  workspaceId: string,
  action: AuditAction,
  actor: Principal | AuditEntry['actor'],
  streamId: string,
  payload?: Record<string, unknown>,
  now: Date
}): Promise<void> {
  await deps.events.record(tx, {
    workspaceId: e.workspaceId,
    action: e.action,
    actor: 'kind' in e.actor ? auditActorOf(e.actor) : e.actor,
    target: streamTarget(e.streamId),
    ...(e.payload !== undefined ? { payload: e.payload } : {}),
    now: e.now
  })
}

/** Starts a stream's delivery chain (a new run token; a job of an older token ends), after the commit. */
export async function startChain (
  deps: Pick<Ports, 'jobs'>, tx: Queryable, streamId: string, runToken: string
): Promise<void> {
  await deps.jobs.send(tx, 'audit-stream-delivery', { streamId, runToken })
  tx.afterCommit?.(() => { deps.jobs.wake('audit-stream-delivery') })
}
