import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import {
  findDirectoryClash, findDirectoryUser, groupsOfUsers, insertDirectoryUser, listDirectoryUsers, lockUserByEmail,
  updateDirectoryUser, USER_FILTER_COLUMNS, type DirectoryAttributes, type DirectoryUserRow
} from '../db/directory-users.js'
import { lockActiveAdmins } from '../db/users.js'
import { findDirectorySettings } from '../db/workspaces.js'
import { serviceError } from '../errors.js'
import { isUuid } from '../lib/uuid.js'
import type { Principal } from '../principal.js'
import { auditActorOf } from '../audit/actor.js'
import { removeLockedMember } from '../members/service.js'
import { reactivateMember, suspendMember } from '../members/status.js'
import { filterToSql, type FilterColumns } from './filter.js'
import { applyPatch, normalizeOperations } from './patch.js'
import { attributesOf, keepsId, listResponse, selectAttributes, userResource, type ScimUser } from './resources.js'
import { applyAdminGroup } from './admin-group.js'
import { pageOf, type ListQuery } from './paging.js'
import type { components } from '../generated/openapi.js'
import { scimBaseUrl } from './errors.js'

// SCIM Users (RFC 7644 §3): the workspace's members as the directory sees them. The directory is
// the authority for those it provisions or links: a create makes an active member at once, active
// false suspends, DELETE removes. Every change is recorded as the directory's key (door `directory`).

type UserList = components['schemas']['ScimUserList']
type PatchRequest = components['schemas']['ScimPatchRequest']

/** The filterable attributes: their SQL is the repository's (src/db/), their kinds the filter's. */
const USER_COLUMNS: FilterColumns = USER_FILTER_COLUMNS
/** The attributes a PATCH may change; paths into anything else are ignored. */
const PATCHABLE = new Set(['username', 'externalid', 'name', 'displayname', 'emails', 'active'])

/** The operations on one SCIM resource type (RFC 7644 §3.2–3.6): the same for Users and Groups. */
export interface ScimResourceService<Resource, List> {
  list(actor: Principal, query: ListQuery): Promise<List>
  get(actor: Principal, id: string, query: Pick<ListQuery, 'attributes' | 'excludedAttributes'>): Promise<Resource>
  create(actor: Principal, body: Record<string, unknown>): Promise<Resource>
  replace(actor: Principal, id: string, body: Record<string, unknown>): Promise<Resource>
  patch(actor: Principal, id: string, body: PatchRequest): Promise<Resource>
  remove(actor: Principal, id: string): Promise<void>
}

export type ScimUserService = ScimResourceService<ScimUser, UserList>

export type ScimDeps = Pick<Ports, 'db' | 'clock' | 'events' | 'config'> & {
  /** Sends a new member the welcome e-mail with a sign-in link (when the workspace wants it). */
  welcome: (email: string) => void
}

const notFound = () => serviceError('NOT_FOUND', ['User'])

export function createScimUserService (deps: ScimDeps): ScimUserService {
  const { db, clock } = deps
  const baseUrl = scimBaseUrl(deps.config.publicUrl)

  const load = loadUser
  const resourceOf = async (q: Queryable, row: DirectoryUserRow) => await userResourceOf(q, row, baseUrl)
  const setActive = async (tx: Queryable, actor: Principal, row: DirectoryUserRow, active: boolean | undefined) => {
    await setUserActive(deps, tx, actor, row, active)
  }

  /** Sets the attributes (and the status) of a member the caller read, in one transaction. */
  async function write (
    actor: Principal, id: string, next: (row: DirectoryUserRow) => ReturnType<typeof attributesOf>
  ) {
    return await db.transaction(async tx => {
      const before = await load(tx, actor, id)
      const attrs = next(before)
      await setActive(tx, actor, before, attrs.active)
      const row = await load(tx, actor, id, true)
      await refuseClash(tx, actor, row.id, attrs)
      if (attrs.email !== row.email && await lockUserByEmail(tx, attrs.email) !== null) {
        throw serviceError('SCIM_UNIQUENESS', [`emails.value ${attrs.email}`])
      }
      const updated = await updateDirectoryUser(tx, row.id, attrs, clock.now())
      await applyAdminGroup(deps, tx, actor, [updated.id])
      return await resourceOf(tx, await load(tx, actor, id))
    })
  }

  return {
    async list (actor, query) {
      const filter = query.filter === undefined ? null : filterToSql(query.filter, USER_COLUMNS, 2)
      const { offset, limit, startIndex } = pageOf(query)
      const { rows, total } = await listDirectoryUsers(db, actor.workspaceId, { offset, limit, filter })
      // The page's groups in one statement, not one per member.
      const groups = await groupsOfUsers(db, rows.map(r => r.id))
      const resources = rows.map(r => selectAttributes(
        userResource(r, groups.get(r.id) ?? [], baseUrl), query.attributes, query.excludedAttributes
      ))
      return listResponse(total, startIndex, resources)
    },

    async get (actor, id, query) {
      const user = await resourceOf(db, await load(db, actor, id))
      return selectAttributes(user, query.attributes, query.excludedAttributes)
    },

    async create (actor, body) {
      const attrs = attributesOf(body)
      const { resource, created } = await db.transaction(
        async tx => await createOrLink(deps, tx, actor, attrs, baseUrl)
      )
      if (created && resource.active === true) {
        const settings = await findDirectorySettings(db, actor.workspaceId)
        if (settings?.welcomeEmail === true) deps.welcome(resource.emails?.[0]?.value ?? '')
      }
      return resource
    },

    async replace (actor, id, body) {
      keepsId(body, id)
      return await write(actor, id, () => attributesOf(body))
    },

    async patch (actor, id, body) {
      const operations = normalizeOperations(body.Operations, PATCHABLE)
      return await write(actor, id, row => {
        const current = userResource(row, [], baseUrl) as unknown as Record<string, unknown>
        const patched = applyPatch(current, operations)
        return attributesOf(patched)
      })
    },

    async remove (actor, id) {
      await db.transaction(async tx => {
        // Admins first, then the member (one lock order for every caller).
        const admins = await lockActiveAdmins(tx, actor.workspaceId)
        const row = await load(tx, actor, id, true)
        if (admins.includes(row.id) && admins.length <= 1) throw serviceError('LAST_ADMIN', [], { userId: row.id })
        await removeLockedMember(deps, tx, actor, row)
      })
    }
  }
}

async function loadUser (q: Queryable, actor: Principal, id: string, forUpdate = false): Promise<DirectoryUserRow> {
  if (!isUuid(id)) throw notFound()
  const row = await findDirectoryUser(q, actor.workspaceId, id, { forUpdate })
  if (row === null) throw notFound()
  return row
}

/**
 * A POST of a User, in the caller's transaction: a new active member (door `directory`), or the
 * member who holds the address linked to the directory, unless another directory identity holds them.
 */
async function createOrLink (
  deps: ScimDeps, tx: Queryable, actor: Principal, attrs: ReturnType<typeof attributesOf>, baseUrl: string
): Promise<{ resource: ScimUser, created: boolean }> {
  const now = deps.clock.now()
  const holder = await lockUserByEmail(tx, attrs.email)
  if (holder !== null) {
    // The address is a member's: link them, unless another directory identity holds them.
    if (holder.workspaceId !== actor.workspaceId) throw serviceError('SCIM_UNIQUENESS', [`emails.value ${attrs.email}`])
    // A member the directory already holds is a duplicate (RFC 7644 §3.3: 409 uniqueness).
    if (holder.linkedAt !== null) throw serviceError('SCIM_UNIQUENESS', [`userName ${holder.userName}`])
    await refuseClash(tx, actor, holder.id, attrs)
    const linked = await updateDirectoryUser(tx, holder.id, attrs, now)
    await setUserActive(deps, tx, actor, linked, attrs.active)
    await applyAdminGroup(deps, tx, actor, [linked.id])
    return { resource: await userResourceOf(tx, await loadUser(tx, actor, linked.id), baseUrl), created: false }
  }
  await refuseClash(tx, actor, null, attrs)
  const row = await insertDirectoryUser(tx, actor.workspaceId, attrs, now)
  await deps.events.record(tx, {
    workspaceId: actor.workspaceId,
    actor: auditActorOf(actor),
    action: 'member.joined',
    target: { type: 'user', id: row.id },
    payload: { email: row.email, role: row.role },
    now
  })
  if (attrs.active === false) {
    await setUserActive(deps, tx, actor, row, false)
    return { resource: await userResourceOf(tx, await loadUser(tx, actor, row.id), baseUrl), created: true }
  }
  // As inserted: active, and in no group yet.
  return { resource: userResource(row, [], baseUrl), created: true }
}

async function userResourceOf (q: Queryable, row: DirectoryUserRow, baseUrl: string): Promise<ScimUser> {
  return userResource(row, (await groupsOfUsers(q, [row.id])).get(row.id) ?? [], baseUrl)
}

/** 409 uniqueness when another member holds the userName (case-insensitively) or the externalId. */
async function refuseClash (q: Queryable, actor: Principal, exceptId: string | null, attrs: DirectoryAttributes) {
  const clash = await findDirectoryClash(q, actor.workspaceId, exceptId, attrs.userName, attrs.externalId)
  if (clash !== null) throw serviceError('SCIM_UNIQUENESS', [`${clash.field} ${clash.value}`])
}

/** Suspends or reactivates as `active` says (nothing when it says what already is). */
async function setUserActive (
  deps: ScimDeps, tx: Queryable, actor: Principal, row: DirectoryUserRow, active: boolean | undefined
): Promise<void> {
  if (active === undefined || active === (row.status === 'active')) return
  const change = active ? reactivateMember : suspendMember
  await change(deps, actor.workspaceId, row.id, auditActorOf(actor), { tx })
}
