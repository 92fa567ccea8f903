import type { Queryable } from '../db/client.js'
import { findUserInWorkspace, listUsers, type MemberStatus, type Role, type UserRow } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { findInviters } from '../db/invitations.js'
import { serviceError } from '../errors.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import type { components } from '../generated/openapi.js'

export type Me = components['schemas']['Me']
export type ApiUser = components['schemas']['User']
export type UserList = components['schemas']['UserList']

export function toApiUser (u: UserRow): ApiUser {
  return {
    id: u.id,
    email: u.email,
    name: u.name,
    role: u.role,
    // A removed user is never shown (every read excludes them); should one reach here, it is not active.
    status: u.status === 'active' ? 'active' : 'suspended',
    managedBy: u.directoryManaged ? 'directory' : null,
    suspendedBy: u.status === 'active' ? null : u.suspendedBy,
    createdAt: u.createdAt.toISOString()
  }
}

/** The signed-in user and their workspace, read fresh (a removed user or workspace is signed out). */
export async function loadMe (q: Queryable, workspaceId: string, userId: string): Promise<Me> {
  const [user, workspace] = await Promise.all([
    findUserInWorkspace(q, workspaceId, userId), findWorkspace(q, workspaceId)
  ])
  if (user === null || workspace === null) throw serviceError('UNAUTHENTICATED')
  return { user: toApiUser(user), workspace: { id: workspace.id, name: workspace.name }, locale: user.locale }
}

/** Which members a page lists: e-mail or name beginning with `search`, of one `role`, of one `status`. */
export interface MemberFilter {
  search?: string | undefined, role?: Role | undefined, status?: MemberStatus | undefined
}

/** One page of a workspace's members, oldest first; nextCursor is null on the last page. */
export async function listMembers (
  q: Queryable,
  workspaceId: string,
  page: { limit: number, cursor?: string | undefined } & MemberFilter
): Promise<UserList> {
  const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined
  const rows = await listUsers(q, workspaceId, {
    limit: page.limit + 1, after, search: page.search, role: page.role, status: page.status
  })
  const { page: items, nextCursor } = pageOf(rows, page.limit, u => u)
  const inviters = new Map(
    (await findInviters(q, workspaceId, { acceptedBy: items.map(u => u.id) })).map(i => [i.userId, i])
  )
  return {
    items: items.map(u => {
      const by = inviters.get(u.id)
      return { ...toApiUser(u), invitedBy: by?.inviter ?? null }
    }),
    nextCursor
  }
}

/** One member of the workspace as the list shows them (with their inviter); 404 NOT_FOUND otherwise. */
export async function readMember (
  q: Queryable, workspaceId: string, userId: string
): Promise<UserList['items'][number]> {
  const [user, inviters] = await Promise.all([
    findUserInWorkspace(q, workspaceId, userId), findInviters(q, workspaceId, { acceptedBy: [userId] })
  ])
  if (user === null) throw serviceError('NOT_FOUND', ['User'])
  return { ...toApiUser(user), invitedBy: inviters[0]?.inviter ?? null }
}
