import type { HandlerDeps, HandlerGroup } from './types.js'
import type { UserRow } from '../src/db/users.js'
import { principalOf } from '../src/principal.js'

/** A member as the contract's User schema shows it. */
function userView (u: UserRow) {
  return { id: u.id, email: u.email, name: u.name, role: u.role, createdAt: u.createdAt.toISOString() }
}

export function adminHandlers ({ services }: HandlerDeps): HandlerGroup<'patchUsersUserId' | 'deleteUsersUserId' | 'getAuditEvents'> {
  return {
    async patchUsersUserId (request) {
      const user = await services.members.changeRole(principalOf(request), request.params.userId, request.body.role)
      return userView(user)
    },
    async deleteUsersUserId (request, reply) {
      await services.members.remove(principalOf(request), request.params.userId)
      return await reply.code(204).send()
    },
    async getAuditEvents (request) {
      const { action, targetType, targetId, limit, cursor } = request.query
      return await services.auditTrail.list(principalOf(request).workspaceId, { action, targetType, targetId, limit: limit ?? 50, cursor })
    }
  }
}
