import type { Queryable } from '../db/client.js'
import { findUserInWorkspace, listUsers, type UserRow } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { serviceError } from '../errors.js'
import type { components } from '../generated/openapi.js'

export type Me = components['schemas']['Me']
export type ApiUser = components['schemas']['User']
export type UserList = components['schemas']['UserList']

export function toApiUser (u: UserRow): ApiUser {
  return { id: u.id, email: u.email, name: u.name, role: u.role, createdAt: u.createdAt.toISOString() }
}

/** The signed-in user and their workspace, read fresh (a removed user or workspace is signed out). */
export async function loadMe (q: Queryable, workspaceId: string, userId: string): Promise<Me> {
  const [user, workspace] = await Promise.all([findUserInWorkspace(q, workspaceId, userId), findWorkspace(q, workspaceId)])
  if (user === null || workspace === null) throw serviceError('UNAUTHENTICATED')
  return { user: toApiUser(user), workspace: { id: workspace.id, name: workspace.name } }
}

// Cursors are opaque to clients: base64url of "<createdAt ISO>|<id>", the keyset of listUsers.
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export function encodeCursor (k: { createdAt: Date, id: string }): string {
  return Buffer.from(`${k.createdAt.toISOString()}|${k.id}`, 'utf8').toString('base64url')
}

export function decodeCursor (cursor: string): { createdAt: Date, id: string } {
  const [iso, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|')
  if (rest.length > 0 || iso === undefined || id === undefined || !ISO.test(iso) || !UUID.test(id) || Number.isNaN(Date.parse(iso))) {
    throw serviceError('VALIDATION_FAILED', ['querystring.cursor is not a cursor this service issued'],
      { errors: [{ in: 'querystring', field: 'cursor', message: 'is not a cursor this service issued' }] })
  }
  return { createdAt: new Date(iso), id }
}

/** One page of a workspace's members, oldest first; nextCursor is null on the last page. */
export async function listMembers (q: Queryable, workspaceId: string, page: { limit: number, cursor?: string | undefined }): Promise<UserList> {
  const after = page.cursor !== undefined ? decodeCursor(page.cursor) : undefined
  // One row more than asked tells whether another page exists without a count query.
  const rows = await listUsers(q, workspaceId, { limit: page.limit + 1, after })
  const items = rows.slice(0, page.limit)
  const last = items[items.length - 1]
  return { items: items.map(toApiUser), nextCursor: rows.length > page.limit && last !== undefined ? encodeCursor(last) : null }
}
