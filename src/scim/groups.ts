import type { Queryable } from '../db/client.js'
import {
  deleteDirectoryGroup, existingMembers, findDirectoryGroup, GROUP_FILTER_COLUMNS, groupHasMemberSql, groupMembers,
  groupNameTaken, insertDirectoryGroup, listDirectoryGroups, membersOfGroups, setGroupMembers, updateDirectoryGroup,
  type DirectoryGroupRow
} from '../db/directory-groups.js'
import { serviceError } from '../errors.js'
import { isUuid } from '../lib/uuid.js'
import type { Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import { filterToSql, type FilterColumns } from './filter.js'
import { applyPatch, normalizeOperations } from './patch.js'
import { GROUP_SCHEMA, keepsId, listResponse, selectAttributes, type ScimGroup } from './resources.js'
import { applyAdminGroup } from './admin-group.js'
import { pageOf, type ListQuery } from './paging.js'
import type { ScimDeps, ScimResourceService } from './users.js'
import { scimBaseUrl } from './errors.js'

// SCIM Groups: the directory's groups of members. One of them may be the workspace's admins'
// group (setting `directory.adminGroup`): whenever membership or a name changes, the members it
// concerns get the role it says (src/scim/admin-group.ts).

type GroupList = components['schemas']['ScimGroupList']

const GROUP_COLUMNS: FilterColumns = GROUP_FILTER_COLUMNS
/** `members[value eq "…"]` and `members eq "…"`: whether the member is in the group. */
const HAS_MEMBER = { 'members.value': groupHasMemberSql, members: groupHasMemberSql }
const PATCHABLE = new Set(['displayname', 'externalid', 'members', 'id'])
const notFound = () => serviceError('NOT_FOUND', ['Group'])

export type ScimGroupService = ScimResourceService<ScimGroup, GroupList>

/** Whether the answer shows the groups' members: not when `excludedAttributes` names them. */
const membersWanted = (query: Pick<ListQuery, 'excludedAttributes'>): boolean =>
  !/(^|,)\s*members\s*(,|$)/i.test(query.excludedAttributes ?? '')

interface GroupInput { displayName: string, externalId: string | null, members: string[] }

function inputOf (body: Record<string, unknown>): GroupInput {
  const displayName = typeof body.displayName === 'string' ? body.displayName.trim() : ''
  if (displayName === '' || displayName.length > 200) {
    throw serviceError('VALIDATION_FAILED', ['displayName must be 1 to 200 characters'])
  }
  const members = Array.isArray(body.members) ? body.members as unknown[] : []
  const ids = members.map(m => (m !== null && typeof m === 'object' ? (m as { value?: unknown }).value : undefined))
  if (ids.some(v => typeof v !== 'string' || !isUuid(v))) {
    throw serviceError('VALIDATION_FAILED', ['members[].value must be the id of a member of this workspace'])
  }
  const externalId = typeof body.externalId === 'string' && body.externalId !== '' ? body.externalId : null
  return { displayName, externalId, members: [...new Set((ids as string[]).map(v => v.toLowerCase()))] }
}

export function createScimGroupService (deps: ScimDeps): ScimGroupService {
  const { db, clock } = deps
  const baseUrl = scimBaseUrl(deps.config.publicUrl)

  async function load (q: Queryable, actor: Principal, id: string, forUpdate = false): Promise<DirectoryGroupRow> {
    if (!isUuid(id)) throw notFound()
    const row = await findDirectoryGroup(q, actor.workspaceId, id, { forUpdate })
    if (row === null) throw notFound()
    return row
  }
  /** The groups as resources, their members (unless left out) read in one statement. */
  async function resourcesOf (q: Queryable, rows: DirectoryGroupRow[], withMembers = true): Promise<ScimGroup[]> {
    const members = withMembers ? await membersOfGroups(q, rows.map(r => r.id)) : null
    return rows.map(row => {
      const group: ScimGroup = {
        schemas: [GROUP_SCHEMA],
        id: row.id,
        displayName: row.displayName,
        meta: {
          resourceType: 'Group',
          created: row.createdAt.toISOString(),
          lastModified: row.updatedAt.toISOString(),
          location: `${baseUrl}/Groups/${row.id}`
        }
      }
      if (row.externalId !== null) group.externalId = row.externalId
      if (members !== null) group.members = (members.get(row.id) ?? []).map(m => ({ value: m.id, display: m.email }))
      return group
    })
  }
  const resourceOf = async (q: Queryable, row: DirectoryGroupRow, withMembers = true): Promise<ScimGroup> =>
    (await resourcesOf(q, [row], withMembers))[0] as ScimGroup

  /** Checks and stores a group's name and members, then the roles of everyone it concerns. */
  async function store (
    tx: Queryable, actor: Principal, id: string | null, input: GroupInput
  ): Promise<DirectoryGroupRow> {
    if (await groupNameTaken(tx, actor.workspaceId, input.displayName, id)) {
      throw serviceError('SCIM_UNIQUENESS', [`displayName ${input.displayName}`])
    }
    const found = await existingMembers(tx, actor.workspaceId, input.members)
    if (found.length !== input.members.length) {
      throw serviceError('VALIDATION_FAILED', ['members[].value must be the id of a member of this workspace'])
    }
    const now = clock.now()
    const before = id === null ? [] : (await groupMembers(tx, id)).map(m => m.id)
    let groupId = id
    if (groupId === null) groupId = (await insertDirectoryGroup(tx, actor.workspaceId, input, now)).id
    else await updateDirectoryGroup(tx, groupId, input, now)
    await setGroupMembers(tx, groupId, input.members)
    await applyAdminGroup(deps, tx, actor, [...new Set([...before, ...input.members])])
    return await load(tx, actor, groupId)
  }

  return {
    async list (actor, query) {
      const filter = query.filter === undefined ? null : filterToSql(query.filter, GROUP_COLUMNS, 2, HAS_MEMBER)
      const { offset, limit, startIndex } = pageOf(query)
      const { rows, total } = await listDirectoryGroups(db, actor.workspaceId, { offset, limit, filter })
      const resources = (await resourcesOf(db, rows, membersWanted(query)))
        .map(r => selectAttributes(r, query.attributes, query.excludedAttributes))
      return listResponse(total, startIndex, resources)
    },

    async get (actor, id, query) {
      const group = await resourceOf(db, await load(db, actor, id), membersWanted(query))
      return selectAttributes(group, query.attributes, query.excludedAttributes)
    },

    async create (actor, body) {
      const input = inputOf(body)
      return await db.transaction(async tx => await resourceOf(tx, await store(tx, actor, null, input)))
    },

    async replace (actor, id, body) {
      keepsId(body, id)
      const input = inputOf(body)
      return await db.transaction(async tx => {
        await load(tx, actor, id, true)
        return await resourceOf(tx, await store(tx, actor, id, input))
      })
    },

    async patch (actor, id, body) {
      const operations = normalizeOperations(body.Operations, PATCHABLE)
      return await db.transaction(async tx => {
        const row = await load(tx, actor, id, true)
        const current = await resourceOf(tx, row)
        const patched = applyPatch(current as unknown as Record<string, unknown>, operations)
        keepsId(patched, row.id)
        return await resourceOf(tx, await store(tx, actor, id, inputOf(patched)))
      })
    },

    async remove (actor, id) {
      await db.transaction(async tx => {
        const row = await load(tx, actor, id, true)
        const members = (await groupMembers(tx, row.id)).map(m => m.id)
        await deleteDirectoryGroup(tx, row.id)
        await applyAdminGroup(deps, tx, actor, members)
      })
    }
  }
}
