import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { toApiUser } from '../src/members/directory.js'
import { negotiate } from '../src/http/accept.js'
import { serviceError } from '../src/errors.js'

const EXPORT_TYPES = { 'application/x-ndjson': 'ndjson', 'text/csv': 'csv' } as const
type ExportType = keyof typeof EXPORT_TYPES

export function adminHandlers (
  { services }: HandlerDeps
): HandlerGroup<
  'getUsersUserId' | 'patchUsersUserId' | 'deleteUsersUserId' | 'postUsersUserIdSuspend' | 'postUsersUserIdReactivate' |
  'getAuditEvents' | 'getAuditEventsExport'
> {
  return {
    async getUsersUserId (request) {
      return await services.members.get(principalOf(request), request.params.userId)
    },
    async patchUsersUserId (request) {
      const user = await services.members.changeRole(principalOf(request), request.params.userId, request.body.role)
      return toApiUser(user)
    },
    async deleteUsersUserId (request, reply) {
      await services.members.remove(principalOf(request), request.params.userId)
      return await reply.code(204).send()
    },
    async postUsersUserIdSuspend (request) {
      return toApiUser(await services.members.suspend(principalOf(request), request.params.userId))
    },
    async postUsersUserIdReactivate (request) {
      return toApiUser(await services.members.reactivate(principalOf(request), request.params.userId))
    },
    async getAuditEvents (request) {
      const { action, targetType, targetId, actor, source, since, until, limit, cursor } = request.query
      return await services.auditTrail.list(
        principalOf(request).workspaceId,
        { action, targetType, targetId, actor, source, since, until, limit: limit ?? 50, cursor }
      )
    },
    async getAuditEventsExport (request, reply) {
      const type = negotiate(request.headers.accept, Object.keys(EXPORT_TYPES) as ExportType[])
      if (type === null) throw serviceError('NOT_ACCEPTABLE')
      const format = EXPORT_TYPES[type]
      const stream = services.auditTrail.export(principalOf(request).workspaceId, request.query, format)
      const name = `audit-events-${new Date().toISOString().slice(0, 10)}.${format === 'csv' ? 'csv' : 'ndjson'}`
      return await reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${name}"`)
        .code(200)
        .send(stream)
    }
  }
}
