import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf as keyOf, type Principal } from '../src/principal.js'
import { SCIM_MEDIA_TYPE } from '../src/scim/errors.js'
import { resourceTypes, schemas, serviceProviderConfig } from '../src/scim/discovery.js'

// SCIM 2.0 under /scim/v2 (RFC 7644): every answer in SCIM's media type; errors are SCIM errors
// (src/plugins/errors.ts). The services do the work; these read the request and shape the answer.

type ScimOperation = 'getScimServiceProviderConfig' | 'getScimResourceTypes' | 'getScimSchemas' |
  'getScimUsers' | 'postScimUsers' | 'getScimUser' | 'putScimUser' | 'patchScimUser' | 'deleteScimUser' |
  'getScimGroups' | 'postScimGroups' | 'getScimGroup' | 'putScimGroup' | 'patchScimGroup' | 'deleteScimGroup'

/** The key acts through this door: audit rows and events say `directory`. */
function principalOf (request: { principal: Principal | null }): Principal {
  const principal = keyOf(request)
  return principal.key === undefined ? principal : { ...principal, key: { ...principal.key, door: 'directory' } }
}

export function scimHandlers ({ services, config }: HandlerDeps): HandlerGroup<ScimOperation> {
  const { users, groups } = services.scim
  const baseUrl = `${config.publicUrl}/scim/v2`
  return {
    async getScimServiceProviderConfig (_request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(serviceProviderConfig(baseUrl))
    },
    async getScimResourceTypes (_request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(resourceTypes(baseUrl))
    },
    async getScimSchemas (_request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(schemas(baseUrl))
    },
    async getScimUsers (request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(await users.list(principalOf(request), request.query))
    },
    async postScimUsers (request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(201).send(await users.create(principalOf(request), request.body))
    },
    async getScimUser (request, reply) {
      const user = await users.get(principalOf(request), request.params.scimUserId, request.query)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(user)
    },
    async putScimUser (request, reply) {
      const user = await users.replace(principalOf(request), request.params.scimUserId, request.body)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(user)
    },
    async patchScimUser (request, reply) {
      const user = await users.patch(principalOf(request), request.params.scimUserId, request.body)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(user)
    },
    async deleteScimUser (request, reply) {
      await users.remove(principalOf(request), request.params.scimUserId)
      return await reply.code(204).send()
    },
    async getScimGroups (request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(await groups.list(principalOf(request), request.query))
    },
    async postScimGroups (request, reply) {
      return await reply.type(SCIM_MEDIA_TYPE).code(201).send(await groups.create(principalOf(request), request.body))
    },
    async getScimGroup (request, reply) {
      const group = await groups.get(principalOf(request), request.params.scimGroupId, request.query)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(group)
    },
    async putScimGroup (request, reply) {
      const group = await groups.replace(principalOf(request), request.params.scimGroupId, request.body)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(group)
    },
    async patchScimGroup (request, reply) {
      const group = await groups.patch(principalOf(request), request.params.scimGroupId, request.body)
      return await reply.type(SCIM_MEDIA_TYPE).code(200).send(group)
    },
    async deleteScimGroup (request, reply) {
      await groups.remove(principalOf(request), request.params.scimGroupId)
      return await reply.code(204).send()
    }
  }
}
