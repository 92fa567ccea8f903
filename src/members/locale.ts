import type { Ports } from '../ports/index.js'
import type { Principal } from '../principal.js'
import { serviceError } from '../errors.js'
import { updateUserLocale } from '../db/users.js'
import { loadMe, type Me } from './directory.js'

/**
 * The signed-in member's own language (a BCP 47 tag, checked by the contract; null: the
 * workspace's): their sign-in links and, for an admin, their notices are written in it.
 */
export async function setOwnLocale (
  deps: Pick<Ports, 'db' | 'clock'>, actor: Principal, locale: string | null
): Promise<Me> {
  if (actor.userId === null) throw serviceError('UNAUTHENTICATED')
  if (!await updateUserLocale(deps.db, actor.workspaceId, actor.userId, locale, deps.clock.now())) {
    throw serviceError('UNAUTHENTICATED')
  }
  return await loadMe(deps.db, actor.workspaceId, actor.userId)
}
