import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function usersHandlers ({ services }: HandlerDeps): HandlerGroup<'getUsersMe' | 'getUsers'> {
  const { auth, members } = services
  return {
    async getUsersMe (request) {
      return await auth.me(principalOf(request))
    },

    async getUsers (request) {
      return await members.list(
        principalOf(request), { limit: request.query.limit ?? 50, cursor: request.query.cursor }
      )
    }
  }
}
