import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function usersHandlers ({ services }: HandlerDeps): HandlerGroup<
  'getUsersMe' | 'patchUsersMe' | 'getUsers' | 'getUsersMeNotifications' | 'putUsersMeNotifications'
> {
  const { auth, members, inviteRequests } = services
  return {
    async getUsersMe (request) {
      return await auth.me(principalOf(request))
    },

    async patchUsersMe (request) {
      return await members.setOwnLocale(principalOf(request), request.body.locale)
    },

    async getUsersMeNotifications (request) {
      return await inviteRequests.noticeSettings(principalOf(request))
    },

    async putUsersMeNotifications (request) {
      return await inviteRequests.setNoticeSettings(principalOf(request), request.body)
    },

    async getUsers (request) {
      const { limit, cursor, q, role, status } = request.query
      return await members.list(principalOf(request), { limit: limit ?? 50, cursor, search: q, role, status })
    }
  }
}
