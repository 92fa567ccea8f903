import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { toApiUser } from '../src/members/directory.js'

export function adminHandlers (
  { services }: HandlerDeps
): HandlerGroup<
  'getUsersUserId' | 'patchUsersUserId' | 'deleteUsersUserId' | 'postUsersUserIdSuspend' | 'postUsersUserIdReactivate' |
  'getAuditEvents'
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
    }
  }
}
