import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { revokeUserSessions } from '../db/sessions.js'
import {
  lockActiveAdmins, lockUserInWorkspace, revokeApiKeysCreatedBy, setUserStatus, updateUserRole,
  type Role, type UserRow
} from '../db/users.js'
import { serviceError } from '../errors.js'
import { requireAdminScope, type Principal } from '../principal.js'
import { auditActorOf, auditPrincipalAction } from '../audit/actor.js'
import { reactivateMember, suspendMember, type StatusChange } from './status.js'
import { listMembers, readMember, type Me, type MemberFilter, type UserList } from './directory.js'
import { setOwnLocale } from './locale.js'

export interface MemberService {
  /** One page of the actor's workspace's members, oldest first (filtered by e-mail or name, role). */
  list(actor: Principal, page: { limit: number, cursor?: string | undefined } & MemberFilter): Promise<UserList>
  /** One member of the actor's workspace, as the list shows them (404 NOT_FOUND for another's or a removed one). */
  get(actor: Principal, userId: string): Promise<UserList['items'][number]>
  /** Sets a member's role; demoting the last active admin is refused (LAST_ADMIN). */
  changeRole(actor: Principal, userId: string, role: Role): Promise<UserRow>
  /** Removes a member: status 'removed', sessions and created API keys revoked at once. */
  remove(actor: Principal, userId: string): Promise<void>
  /** Suspends a member (src/members/status.ts); the last active admin is refused (LAST_ADMIN). */
  suspend(actor: Principal, userId: string): Promise<UserRow>
  /** Reactivates a suspended member with the role they had. */
  reactivate(actor: Principal, userId: string): Promise<UserRow>
  /** The signed-in member's own language (src/members/locale.ts); null: the workspace's. */
  setOwnLocale(actor: Principal, locale: string | null): Promise<Me>
}

export function createMemberService (deps: Pick<Ports, 'db' | 'clock' | 'events'>): MemberService {
  const { db, clock } = deps

  /**
   * Locks the workspace's admin rows, then the target. The acting admin must still be one of
   * them: a request authenticated just before a concurrent demotion committed is refused here.
   */
  async function lockForChange (tx: Queryable, actor: Principal, userId: string) {
    const admins = await lockActiveAdmins(tx, actor.workspaceId)
    if (!admins.includes(actor.userId)) throw serviceError('FORBIDDEN', ['admin'])
    const target = await lockUserInWorkspace(tx, actor.workspaceId, userId)
    if (target === null) throw serviceError('NOT_FOUND', ['User'])
    // Only an active admin counts towards the rule; removing a disabled admin leaves the count.
    const isCountedAdmin = admins.includes(target.id)
    return { target, lastAdmin: isCountedAdmin && admins.length <= 1 }
  }

  /** A status change by an admin (session, key or chat): they must still be one; an admin's needs members:admin. */
  const byAdmin = async (change: StatusChange, actor: Principal, userId: string) =>
    await change(deps, actor.workspaceId, userId, auditActorOf(actor), {
      actingAdminId: actor.userId,
      authorize: member => { if (member.role === 'admin') requireAdminScope(actor) }
    })

  return {
    list: async (actor, page) => await listMembers(db, actor.workspaceId, page),
    get: async (actor, userId) => await readMember(db, actor.workspaceId, userId),
    suspend: async (actor, userId) => await byAdmin(suspendMember, actor, userId),
    reactivate: async (actor, userId) => await byAdmin(reactivateMember, actor, userId),
    setOwnLocale: async (actor, locale) => await setOwnLocale(deps, actor, locale),

    async changeRole (actor, userId, role) {
      return await db.transaction(async tx => {
        const { target, lastAdmin } = await lockForChange(tx, actor, userId)
        if (target.role === role) return target // nothing changes, nothing to audit
        requireAdminScope(actor) // every change of role makes or unmakes an admin
        if (role !== 'admin' && lastAdmin) throw serviceError('LAST_ADMIN', [], { userId })
        const now = clock.now()
        const updated = await updateUserRole(tx, target.id, role, now)
        if (updated === null) throw serviceError('NOT_FOUND', ['User'])
        await auditPrincipalAction(deps.events, tx, actor, {
          action: 'member.role_changed',
          target: { type: 'user', id: target.id },
          payload: { email: target.email, from: target.role, to: role },
          now
        })
        return updated
      })
    },

    async remove (actor, userId) {
      await db.transaction(async tx => {
        const { target, lastAdmin } = await lockForChange(tx, actor, userId)
        if (lastAdmin) throw serviceError('LAST_ADMIN', [], { userId })
        if (target.role === 'admin') requireAdminScope(actor) // removing an admin unmakes one
        await removeLockedMember(deps, tx, actor, target)
      })
    }
  }
}

/**
 * Removes a member whose row (and the workspace's admins) the caller has locked and checked
 * against the last-admin rule: status 'removed', sessions and the API keys they created revoked at
 * once, `member.removed` recorded. The admins' REST operation and the directory (SCIM) both end here.
 */
export async function removeLockedMember (
  deps: Pick<Ports, 'clock' | 'events'>,
  tx: Queryable,
  actor: Principal,
  target: { id: string, email: string, role: Role }
): Promise<void> {
  const now = deps.clock.now()
  await setUserStatus(tx, target.id, 'removed', now)
  // Sessions are checked against the row on every request; revoking them also ends them
  // for good should the status ever be changed back.
  const sessions = await revokeUserSessions(tx, target.id, now)
  const apiKeys = await revokeApiKeysCreatedBy(tx, target.id, now)
  await auditPrincipalAction(deps.events, tx, actor, {
    action: 'member.removed',
    target: { type: 'user', id: target.id },
    payload: { email: target.email, role: target.role, revokedSessions: sessions, revokedApiKeys: apiKeys },
    now
  })
}
