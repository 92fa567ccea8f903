import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function apiKeyHandlers (
  { services }: HandlerDeps
): HandlerGroup<'postApiKeys' | 'getApiKeys' | 'deleteApiKeysApiKeyId'> {
  return {
    async postApiKeys (request, reply) {
      const created = await services.apiKeys.create(principalOf(request), request.body)
      // The secret is in this one answer only; keep it out of any shared cache.
      return await reply.header('cache-control', 'no-store').code(201).send(created)
    },
    async getApiKeys (request) {
      return { items: await services.apiKeys.list(principalOf(request)) }
    },
    async deleteApiKeysApiKeyId (request, reply) {
      await services.apiKeys.revoke(principalOf(request), request.params.apiKeyId)
      return await reply.code(204).send()
    }
  }
}
