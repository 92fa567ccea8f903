import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function auditStreamHandlers ({ services }: HandlerDeps): HandlerGroup<
  'postAuditStreams' | 'getAuditStreams' | 'getAuditStreamsStreamId' | 'patchAuditStreamsStreamId' |
  'deleteAuditStreamsStreamId' | 'postAuditStreamsStreamIdTest' | 'postAuditStreamsStreamIdPause' |
  'postAuditStreamsStreamIdResume'
> {
  const streams = services.auditStreams
  return {
    async postAuditStreams (request, reply) {
      const created = await streams.create(principalOf(request), request.body)
      // An https stream's signing secret is in this one answer only; keep it out of any shared cache.
      return await reply.header('cache-control', 'no-store').code(201).send(created)
    },
    async getAuditStreams (request) {
      return { items: await streams.list(principalOf(request)) }
    },
    async getAuditStreamsStreamId (request) {
      return await streams.get(principalOf(request), request.params.streamId)
    },
    async patchAuditStreamsStreamId (request) {
      return await streams.update(principalOf(request), request.params.streamId, request.body)
    },
    async deleteAuditStreamsStreamId (request, reply) {
      await streams.remove(principalOf(request), request.params.streamId)
      return await reply.code(204).send()
    },
    async postAuditStreamsStreamIdTest (request) {
      return await streams.test(principalOf(request), request.params.streamId)
    },
    async postAuditStreamsStreamIdPause (request) {
      return await streams.setPaused(principalOf(request), request.params.streamId, true)
    },
    async postAuditStreamsStreamIdResume (request) {
      return await streams.setPaused(principalOf(request), request.params.streamId, false)
    }
  }
}
