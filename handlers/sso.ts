import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function ssoHandlers ({ services }: HandlerDeps): HandlerGroup<
  'postSsoConnections' | 'getSsoConnections' | 'getSsoConnectionsConnectionId' | 'patchSsoConnectionsConnectionId' |
  'deleteSsoConnectionsConnectionId'
> {
  const { ssoConnections } = services
  return {
    async postSsoConnections (request, reply) {
      return await reply.code(201).send(await ssoConnections.create(principalOf(request), request.body))
    },
    async getSsoConnections (request) {
      return { items: await ssoConnections.list(principalOf(request)) }
    },
    async getSsoConnectionsConnectionId (request) {
      return await ssoConnections.get(principalOf(request), request.params.connectionId)
    },
    async patchSsoConnectionsConnectionId (request) {
      return await ssoConnections.update(principalOf(request), request.params.connectionId, request.body)
    },
    async deleteSsoConnectionsConnectionId (request, reply) {
      await ssoConnections.remove(principalOf(request), request.params.connectionId)
      return await reply.code(204).send()
    }
  }
}
