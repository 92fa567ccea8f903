import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { listAuditStreams } from '../db/audit-streams.js'
import { existingStream, streamView, type AuditStreamDeps, type AuditStreamView } from './context.js'
import { createStream, removeStream, setStreamPaused, updateStream } from './stream-change.js'
import { testStream } from './stream-test.js'

// A workspace's audit streams (issue 55), one file per kind of operation (stream-change.ts,
// stream-test.ts) over what they share (context.ts); delivery.ts sends what they stream.

type Schemas = components['schemas']

export interface AuditStreamService {
  create(actor: Principal, input: Schemas['CreateAuditStreamRequest']): Promise<Schemas['AuditStreamCreated']>
  list(actor: Principal): Promise<AuditStreamView[]>
  get(actor: Principal, streamId: string): Promise<AuditStreamView>
  update(actor: Principal, streamId: string, change: Schemas['UpdateAuditStreamRequest']): Promise<AuditStreamView>
  remove(actor: Principal, streamId: string): Promise<void>
  /** One test record, sent now; what the receiver answered. */
  test(actor: Principal, streamId: string): Promise<Schemas['AuditStreamTestResult']>
  setPaused(actor: Principal, streamId: string, paused: boolean): Promise<AuditStreamView>
}

export function createAuditStreamService (deps: AuditStreamDeps): AuditStreamService {
  return {
    create: async (actor, input) => await createStream(deps, actor, input),
    async list (actor) {
      const rows = await listAuditStreams(deps.db, actor.workspaceId)
      return await Promise.all(rows.map(async s => await streamView(deps.db, s)))
    },
    get: async (actor, streamId) => await streamView(deps.db, await existingStream(deps, actor, streamId)),
    update: async (actor, streamId, change) => await updateStream(deps, actor, streamId, change),
    remove: async (actor, streamId) => { await removeStream(deps, actor, streamId) },
    test: async (actor, streamId) => await testStream(deps, actor, streamId),
    setPaused: async (actor, streamId, paused) => await setStreamPaused(deps, actor, streamId, paused)
  }
}
