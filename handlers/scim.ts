import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf as keyOf, type Principal } from '../src/principal.js'
import { scimBaseUrl } from '../src/scim/errors.js'
import { resourceTypes, schemas, serviceProviderConfig } from '../src/scim/discovery.js'

// SCIM 2.0 under /api/scim/v2 (RFC 7644), and the same under the deprecated /scim/v2. Their
// context (src/routes/scim.ts) answers in SCIM's media type and makes every error a SCIM error.
// The services do the work; these read the request and shape the answer.

/** The operations at SCIM's base path, /api/scim/v2. */
type ScimOperation = 'scimGetServiceProviderConfig' | 'scimGetResourceTypes' | 'scimGetSchemas' |
  'scimListUsers' | 'scimCreateUser' | 'scimGetUser' | 'scimReplaceUser' | 'scimPatchUser' | 'scimDeleteUser' |
  'scimListGroups' | 'scimCreateGroup' | 'scimGetGroup' | 'scimReplaceGroup' | 'scimPatchGroup' | 'scimDeleteGroup'

/** The same operations at the deprecated /scim/v2 (contract 2.1; sunset 2027-06-30), by their 1.x names. */
const DEPRECATED_PATH_OPERATIONS = {
  getScimServiceProviderConfig: 'scimGetServiceProviderConfig',
  getScimResourceTypes: 'scimGetResourceTypes',
  getScimSchemas: 'scimGetSchemas',
  getScimUsers: 'scimListUsers',
  postScimUsers: 'scimCreateUser',
  getScimUser: 'scimGetUser',
  putScimUser: 'scimReplaceUser',
  patchScimUser: 'scimPatchUser',
  deleteScimUser: 'scimDeleteUser',
  getScimGroups: 'scimListGroups',
  postScimGroups: 'scimCreateGroup',
  getScimGroup: 'scimGetGroup',
  putScimGroup: 'scimReplaceGroup',
  patchScimGroup: 'scimPatchGroup',
  deleteScimGroup: 'scimDeleteGroup'
} as const satisfies Record<string, ScimOperation>
type DeprecatedPathOperation = keyof typeof DEPRECATED_PATH_OPERATIONS

/** The key acts through this door: audit rows and events say `directory`. */
function principalOf (request: { principal: Principal | null }): Principal {
  const principal = keyOf(request)
  return principal.key === undefined ? principal : { ...principal, key: { ...principal.key, door: 'directory' } }
}

export function scimHandlers (deps: HandlerDeps): HandlerGroup<ScimOperation | DeprecatedPathOperation> {
  const handlers = currentHandlers(deps)
  const aliases = Object.fromEntries(
    Object.entries(DEPRECATED_PATH_OPERATIONS).map(([old, now]) => [old, handlers[now]])
  )
  return { ...handlers, ...aliases } as HandlerGroup<ScimOperation | DeprecatedPathOperation>
}

function currentHandlers ({ services, config }: HandlerDeps): HandlerGroup<ScimOperation> {
  const { users, groups } = services.scim
  const baseUrl = scimBaseUrl(config.publicUrl)
  return {
    async scimGetServiceProviderConfig (_request, reply) {
      return await reply.code(200).send(serviceProviderConfig(baseUrl))
    },
    async scimGetResourceTypes (_request, reply) {
      return await reply.code(200).send(resourceTypes(baseUrl))
    },
    async scimGetSchemas (_request, reply) {
      return await reply.code(200).send(schemas(baseUrl))
    },
    async scimListUsers (request, reply) {
      return await reply.code(200).send(await users.list(principalOf(request), request.query))
    },
    async scimCreateUser (request, reply) {
      const user = await users.create(principalOf(request), request.body)
      // RFC 7644 §3.3: a 201 SHALL carry the resource's URI in Location, as its meta.location.
      return await reply.header('location', `${baseUrl}/Users/${user.id}`).code(201).send(user)
    },
    async scimGetUser (request, reply) {
      const user = await users.get(principalOf(request), request.params.scimUserId, request.query)
      return await reply.code(200).send(user)
    },
    async scimReplaceUser (request, reply) {
      const user = await users.replace(principalOf(request), request.params.scimUserId, request.body)
      return await reply.code(200).send(user)
    },
    async scimPatchUser (request, reply) {
      const user = await users.patch(principalOf(request), request.params.scimUserId, request.body)
      return await reply.code(200).send(user)
    },
    async scimDeleteUser (request, reply) {
      await users.remove(principalOf(request), request.params.scimUserId)
      return await reply.code(204).send()
    },
    async scimListGroups (request, reply) {
      return await reply.code(200).send(await groups.list(principalOf(request), request.query))
    },
    async scimCreateGroup (request, reply) {
      const group = await groups.create(principalOf(request), request.body)
      return await reply.header('location', `${baseUrl}/Groups/${group.id}`).code(201).send(group)
    },
    async scimGetGroup (request, reply) {
      const group = await groups.get(principalOf(request), request.params.scimGroupId, request.query)
      return await reply.code(200).send(group)
    },
    async scimReplaceGroup (request, reply) {
      const group = await groups.replace(principalOf(request), request.params.scimGroupId, request.body)
      return await reply.code(200).send(group)
    },
    async scimPatchGroup (request, reply) {
      const group = await groups.patch(principalOf(request), request.params.scimGroupId, request.body)
      return await reply.code(200).send(group)
    },
    async scimDeleteGroup (request, reply) {
      await groups.remove(principalOf(request), request.params.scimGroupId)
      return await reply.code(204).send()
    }
  }
}
