import type { Ports } from '../ports/index.js'
import type { AuditActor } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import { revokeUserSessions } from '../db/sessions.js'
import { expireUserLoginTokens } from '../db/login-tokens.js'
import { lockActiveAdmins, lockUserInWorkspace, memberStatusOf, setUserStatus, type UserRow } from '../db/users.js'
import { serviceError } from '../errors.js'

// Suspension: reversible, keeps the member's role and the invitations they sent. It takes effect
// at once on every instance because nothing about a member is cached: every session, API key,
// login link and chat request is checked against the users row (status = 'active') when used.
// Revoking the sessions as well makes the end of those sessions final: reactivation restores the
// member, not their old cookies. Their API keys are refused while the row says suspended and
// work again after reactivation (keys belong to the workspace's work, not to one sitting).

type MemberStatusDeps = Pick<Ports, 'db' | 'clock' | 'events'>

interface StatusChangeOptions {
  /**
   * The person acting (an admin's session or key): they must still be an active admin when the
   * change is made (FORBIDDEN otherwise). Absent for an actor that is no person (the directory's
   * workspace key).
   */
  actingAdminId?: string
  /**
   * The caller's transaction, to make the change part of a larger one (a SCIM PUT). Call before
   * locking the member's row yourself: the admins are locked first, in one order for every caller.
   */
  tx?: Queryable
  /** Checked with the member's row locked, before any change (an API key needs `members:admin` for an admin). */
  authorize?: (member: UserRow) => void
}

async function inTransaction<T> (
  deps: MemberStatusDeps, options: StatusChangeOptions, fn: (tx: Queryable) => Promise<T>
): Promise<T> {
  return options.tx !== undefined ? await fn(options.tx) : await deps.db.transaction(fn)
}

/** Locks the workspace's active admins, then the member; checks the acting admin is still one. */
async function lockMember (tx: Queryable, workspaceId: string, userId: string, options: StatusChangeOptions) {
  const admins = await lockActiveAdmins(tx, workspaceId)
  if (options.actingAdminId !== undefined && !admins.includes(options.actingAdminId)) {
    throw serviceError('FORBIDDEN', ['admin'])
  }
  const member = await lockUserInWorkspace(tx, workspaceId, userId)
  if (member === null) throw serviceError('NOT_FOUND', ['User'])
  options.authorize?.(member)
  return { member, admins }
}

/**
 * A change of a member's status in their workspace, made by `actor` (how audit rows and events
 * name who acted). Returns the member as it now is; an unknown or removed member is 404
 * NOT_FOUND; making a change already made (suspending a suspended member) records nothing.
 */
export type StatusChange = (
  deps: MemberStatusDeps, workspaceId: string, userId: string, actor: AuditActor, options?: StatusChangeOptions
) => Promise<UserRow>

/**
 * Suspends a member: their sessions are revoked and their unused login links expire, in the same
 * transaction as the `member.suspended` event. The last active admin cannot be suspended (409
 * LAST_ADMIN).
 */
export const suspendMember: StatusChange = async (deps, workspaceId, userId, actor, options = {}) =>
  await inTransaction(deps, options, async tx => {
    const { member, admins } = await lockMember(tx, workspaceId, userId, options)
    if (member.status === 'suspended') return member
    if (admins.includes(member.id) && admins.length <= 1) throw serviceError('LAST_ADMIN', [], { userId })
    const now = deps.clock.now()
    const by = actor.source === 'directory' ? 'directory' : 'admin'
    const updated = await setUserStatus(tx, member.id, 'suspended', now, by)
    if (updated === null) throw serviceError('NOT_FOUND', ['User'])
    const revokedSessions = await revokeUserSessions(tx, member.id, now)
    await expireUserLoginTokens(tx, member.id, now)
    await deps.events.record(tx, {
      workspaceId,
      actor,
      action: 'member.suspended',
      target: { type: 'user', id: member.id },
      payload: { email: member.email, role: member.role, revokedSessions },
      now
    })
    return updated
  })

/**
 * Reactivates a suspended member with the role they had (`member.reactivated`); their API keys work
 * again. A member their directory deactivated is reactivated by the directory alone (403
 * MANAGED_BY_DIRECTORY for anyone else): else the directory and the service would disagree.
 */
export const reactivateMember: StatusChange = async (deps, workspaceId, userId, actor, options = {}) =>
  await inTransaction(deps, options, async tx => {
    const { member } = await lockMember(tx, workspaceId, userId, options)
    if (member.status === 'active') return member
    if (member.suspendedBy === 'directory' && actor.source !== 'directory') throw serviceError('MANAGED_BY_DIRECTORY')
    const now = deps.clock.now()
    const updated = await setUserStatus(tx, member.id, 'active', now)
    if (updated === null) throw serviceError('NOT_FOUND', ['User'])
    await deps.events.record(tx, {
      workspaceId,
      actor,
      action: 'member.reactivated',
      target: { type: 'user', id: member.id },
      payload: { email: member.email, role: member.role },
      now
    })
    return updated
  })

/**
 * An address that is a member's already is not invited (nor requested): USER_EXISTS, or
 * MEMBER_SUSPENDED when that member is suspended — the admin reactivates them instead.
 */
export async function refuseMemberAddress (q: Queryable, workspaceId: string, email: string): Promise<void> {
  const status = await memberStatusOf(q, workspaceId, email)
  if (status === 'suspended') throw serviceError('MEMBER_SUSPENDED')
  if (status !== null) throw serviceError('USER_EXISTS')
}
