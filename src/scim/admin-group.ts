import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { lockActiveAdmins, updateUserRole } from '../db/users.js'
import { serviceError } from '../errors.js'
import type { Principal } from '../principal.js'
import { auditActorOf } from '../audit/actor.js'
import { directoryManagedRoles } from '../db/directory-groups.js'

// The workspace setting `directory.adminGroup` names the directory group whose members are admins.
// It sets roles only for members the directory provisioned or linked, never for others; a change
// that would leave the workspace without an active admin is refused (LAST_ADMIN, a SCIM error),
// never made silently.

/** Gives each of `userIds` the directory manages the role the admins' group says; refuses the last admin's loss. */
export async function applyAdminGroup (
  deps: Pick<Ports, 'clock' | 'events'>, tx: Queryable, actor: Principal, userIds: readonly string[]
): Promise<void> {
  if (userIds.length === 0) return
  const wanted = await directoryManagedRoles(tx, actor.workspaceId, userIds)
  const changes = wanted.filter(w => w.adminGroup !== null && w.role !== w.wanted)
  if (changes.length === 0) return
  // Admins first (one lock order for every caller), then the rule on what they will be.
  const admins = await lockActiveAdmins(tx, actor.workspaceId)
  const demoted = new Set(changes.filter(c => c.wanted === 'member').map(c => c.id))
  const promotedActive = changes.filter(c => c.wanted === 'admin' && c.status === 'active').length
  if (admins.filter(a => !demoted.has(a)).length + promotedActive === 0) {
    throw serviceError('LAST_ADMIN', [], { userId: [...demoted][0] })
  }
  const now = deps.clock.now()
  for (const c of changes) {
    await updateUserRole(tx, c.id, c.wanted, now)
    await deps.events.record(tx, {
      workspaceId: actor.workspaceId,
      actor: auditActorOf(actor),
      action: 'member.role_changed',
      target: { type: 'user', id: c.id },
      payload: { email: c.email, from: c.role, to: c.wanted },
      now
    })
  }
}
