import type { components } from '../generated/openapi.js'
import type { DirectoryUserRow, DirectoryAttributes } from '../db/directory-users.js'
import { storedAddress } from '../lib/email.js'
import { serviceError } from '../errors.js'

// Members and groups as SCIM resources (RFC 7643 §4), and back: what a directory's User body sets.

export type ScimUser = components['schemas']['ScimUser']
export type ScimGroup = components['schemas']['ScimGroup']
export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User'
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group'
const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse'

/** A string attribute when present and not empty. */
const text = (v: unknown): string | undefined => typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined

/** A SCIM boolean: JSON's, or Entra ID's "True" / "False" (any case). */
export function scimBoolean (v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (typeof v === 'string' && /^(true|false)$/i.test(v)) return v.toLowerCase() === 'true'
  return undefined
}

export function userResource (
  row: DirectoryUserRow, groups: Array<{ id: string, displayName: string }>, baseUrl: string
): ScimUser {
  const name: NonNullable<ScimUser['name']> = {}
  if (row.givenName !== null) name.givenName = row.givenName
  if (row.familyName !== null) name.familyName = row.familyName
  if (row.name !== null) name.formatted = row.name
  const user: ScimUser = {
    schemas: [USER_SCHEMA],
    id: row.id,
    userName: row.userName,
    name,
    emails: [{ value: row.email, type: 'work', primary: true }],
    active: row.status === 'active',
    groups: groups.map(g => ({ value: g.id, display: g.displayName })),
    meta: {
      resourceType: 'User',
      created: row.createdAt.toISOString(),
      lastModified: row.updatedAt.toISOString(),
      location: `${baseUrl}/Users/${row.id}`
    }
  }
  if (row.externalId !== null) user.externalId = row.externalId
  if (row.name !== null) user.displayName = row.name
  return user
}

/** What a User body (POST, PUT, or a resource after PATCH) sets on a member, and whether it is active. */
export function attributesOf (body: Record<string, unknown>): DirectoryAttributes & { active: boolean | undefined } {
  const userName = text(body.userName)
  if (userName === undefined) throw invalidValue('userName is required')
  const emails = Array.isArray(body.emails) ? body.emails as Array<Record<string, unknown> | null> : []
  const values = emails.filter(e => e !== null && typeof e === 'object')
  const chosen = values.find(e => scimBoolean(e?.primary) === true) ?? values.find(e => e?.type === 'work') ?? values[0]
  const given = text(chosen?.value)
  // The member's address: the primary (else the work, else the first) e-mail, else userName.
  const email = storedAddress(given ?? userName)
  if (email === null) {
    throw invalidValue(`${given === undefined ? 'userName' : 'emails.value'} must be an e-mail address`)
  }
  const name = (body.name !== null && typeof body.name === 'object' ? body.name : {}) as Record<string, unknown>
  const givenName = text(name.givenName) ?? null
  const familyName = text(name.familyName) ?? null
  const display = text(body.displayName) ?? text(name.formatted) ??
    (text([givenName, familyName].filter(x => x !== null).join(' ')) ?? null)
  const active = body.active === undefined ? undefined : scimBoolean(body.active)
  if (body.active !== undefined && active === undefined) throw invalidValue('active must be true or false')
  return {
    userName,
    externalId: text(body.externalId) ?? null,
    email,
    name: display?.slice(0, 200) ?? null,
    givenName: givenName?.slice(0, 200) ?? null,
    familyName: familyName?.slice(0, 200) ?? null,
    active
  }
}

function invalidValue (message: string): Error {
  const field = message.split(' ')[0] ?? ''
  return serviceError('VALIDATION_FAILED', [message], { errors: [{ in: 'body', field, message }] })
}

/** A SCIM ListResponse (RFC 7644 §3.4.2) of one page. */
export function listResponse<T> (total: number, startIndex: number, resources: T[]) {
  return {
    schemas: [LIST_SCHEMA], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources
  }
}

/** A body naming an id other than the resource's own: 400 mutability (the service sets ids). */
export function keepsId (body: Record<string, unknown>, id: string): void {
  if (body.id !== undefined && body.id !== id) throw serviceError('SCIM_MUTABILITY', ['id is set by the service'])
}

/**
 * `attributes` / `excludedAttributes` (RFC 7644 §3.9) on one resource: `id` and `schemas` always
 * stay; a sub-attribute (`name.givenName`) keeps or drops only that part.
 */
export function selectAttributes<T extends Record<string, unknown>> (
  resource: T, attributes: string | undefined, excluded: string | undefined
): T {
  const list = (s: string | undefined) => (s ?? '').split(',')
    .map(a => a.trim().replace(/^urn:[^ ]*:(User|Group):/i, '').toLowerCase())
    .filter(a => a !== '')
  const keep = list(attributes)
  const drop = list(excluded)
  if (keep.length === 0 && drop.length === 0) return resource
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(resource)) {
    const k = key.toLowerCase()
    if (k === 'id' || k === 'schemas') { out[key] = value; continue }
    if (keep.length > 0) {
      if (keep.includes(k)) out[key] = value
      else {
        const subs = keep.filter(a => a.startsWith(`${k}.`)).map(a => a.slice(k.length + 1))
        if (subs.length > 0 && value !== null && typeof value === 'object' && !Array.isArray(value)) {
          out[key] = Object.fromEntries(Object.entries(value).filter(([sk]) => subs.includes(sk.toLowerCase())))
        }
      }
      continue
    }
    if (drop.includes(k)) continue
    const subs = drop.filter(a => a.startsWith(`${k}.`)).map(a => a.slice(k.length + 1))
    out[key] = subs.length > 0 && value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).filter(([sk]) => !subs.includes(sk.toLowerCase())))
      : value
  }
  return out as T
}
