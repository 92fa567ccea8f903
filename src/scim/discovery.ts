import type { components } from '../generated/openapi.js'
import { MAX_COUNT } from './paging.js'
import { GROUP_SCHEMA, listResponse, USER_SCHEMA } from './resources.js'

// What this SCIM service provider supports (RFC 7643 §5–§7): fixed documents, with the base URL.

type Config = components['schemas']['ScimServiceProviderConfig']
type Definitions = components['schemas']['ScimDefinitionList']

const attr = (name: string, more: Record<string, unknown> = {}) => ({
  name,
  type: 'string',
  multiValued: false,
  required: false,
  caseExact: false,
  mutability: 'readWrite',
  returned: 'default',
  uniqueness: 'none',
  ...more
})

const USER_ATTRIBUTES = [
  attr('userName', { required: true, uniqueness: 'server' }),
  attr('externalId', { caseExact: true }),
  attr('displayName'),
  {
    ...attr('name', { type: 'complex' }),
    subAttributes: [attr('givenName'), attr('familyName'), attr('formatted')]
  },
  {
    ...attr('emails', { type: 'complex', multiValued: true }),
    subAttributes: [attr('value'), attr('type'), attr('primary', { type: 'boolean' })]
  },
  attr('active', { type: 'boolean' }),
  {
    ...attr('groups', { type: 'complex', multiValued: true, mutability: 'readOnly' }),
    subAttributes: [attr('value'), attr('display')]
  }
]
const GROUP_ATTRIBUTES = [
  attr('displayName', { required: true, uniqueness: 'server' }),
  attr('externalId', { caseExact: true }),
  { ...attr('members', { type: 'complex', multiValued: true }), subAttributes: [attr('value'), attr('display')] }
]

const list = (resources: Array<Record<string, unknown>>): Definitions => listResponse(resources.length, 1, resources)

export function serviceProviderConfig (baseUrl: string): Config {
  return {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults: MAX_COUNT },
    changePassword: { supported: false },
    sort: { supported: false },
    etag: { supported: false },
    authenticationSchemes: [{
      type: 'oauthbearertoken',
      name: 'Directory key',
      description: 'An API key with the scim scope, as Authorization: Bearer',
      primary: true
    }],
    meta: { resourceType: 'ServiceProviderConfig', location: `${baseUrl}/ServiceProviderConfig` }
  }
}

export function resourceTypes (baseUrl: string): Definitions {
  const type = (id: string, endpoint: string, schema: string) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'],
    id,
    name: id,
    endpoint,
    schema,
    meta: { resourceType: 'ResourceType', location: `${baseUrl}/ResourceTypes/${id}` }
  })
  return list([type('User', '/Users', USER_SCHEMA), type('Group', '/Groups', GROUP_SCHEMA)])
}

export function schemas (baseUrl: string): Definitions {
  const schema = (id: string, name: string, attributes: unknown[]) => ({
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'],
    id,
    name,
    attributes,
    meta: { resourceType: 'Schema', location: `${baseUrl}/Schemas/${id}` }
  })
  return list([schema(USER_SCHEMA, 'User', USER_ATTRIBUTES), schema(GROUP_SCHEMA, 'Group', GROUP_ATTRIBUTES)])
}
