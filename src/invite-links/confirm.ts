import { serviceError } from '../errors.js'
import { hashToken } from '../lib/tokens.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Queryable } from '../db/client.js'
import { findUserByEmail } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { findPendingInviteRequest, insertInviteRequest } from '../db/invite-requests.js'
import {
  consumeInviteLinkJoin, findInviteLinkByCodeHash, useInviteLink, type InviteLinkJoinRow, type InviteLinkRow
} from '../db/invite-links.js'
import type { Me } from '../members/directory.js'
import { joinAsMember } from '../members/join.js'
import { refuseUnusable, requireAllowedDomain, usableLink, type InviteLinkDeps } from './context.js'

// The address is proven (the e-mailed token came back): one transaction uses the confirmation,
// checks the domain on the proven address, counts the link's use (one guarded UPDATE) and then
// either makes the member and their session, or an invite request for the admins.

export type JoinOutcome =
  | { kind: 'joined', me: Me, token: string }
  | { kind: 'requested', message: string }

const REFUSAL = { used: 'TOKEN_USED', expired: 'TOKEN_EXPIRED', unknown: 'TOKEN_INVALID' } as const

/** Invite requests made through a link lapse after a week, like those members make. */
const REQUEST_TTL_MS = 7 * 86_400_000

export async function confirmJoin (deps: InviteLinkDeps, code: string, token: string): Promise<JoinOutcome> {
  try {
    return await deps.db.transaction(async tx => {
      const now = deps.clock.now()
      const link = await usableLink(tx, code, now)
      const join = await consumeInviteLinkJoin(
        tx, { linkId: link.id, codeHash: link.codeHash, tokenHash: hashToken(token), now }
      )
      if ('reason' in join) throw serviceError(REFUSAL[join.reason])
      requireAllowedDomain(link, join.email)
      return link.requiresApproval
        ? await requestApproval(deps, tx, link, join, now)
        : await joinNow(deps, tx, link, join, now)
    })
  } catch (err) {
    // The unique e-mail index fired: the address became an account between check and insert.
    if (isUniqueViolation(err)) throw serviceError('USER_EXISTS')
    throw err
  }
}

/** The link's use, counted atomically; none left (or revoked, expired meanwhile): its refusal. */
async function countUse (tx: Queryable, link: InviteLinkRow, now: Date): Promise<void> {
  if (await useInviteLink(tx, link.id, now) !== null) return
  refuseUnusable(await findInviteLinkByCodeHash(tx, link.codeHash), now)
  throw serviceError('TOKEN_USED')
}

async function joinNow (
  deps: InviteLinkDeps, tx: Queryable, link: InviteLinkRow, join: InviteLinkJoinRow, now: Date
): Promise<JoinOutcome> {
  if (await findUserByEmail(tx, join.email) !== null) throw serviceError('USER_EXISTS')
  await countUse(tx, link, now)
  // The door is named: the link the person came through (the event's data.inviteLinkId).
  return await joinAsMember(
    deps, tx, { workspaceId: link.workspaceId, email: join.email, name: join.name, role: link.role },
    { inviteLinkId: link.id }, now
  )
}

async function requestApproval (
  deps: InviteLinkDeps, tx: Queryable, link: InviteLinkRow, join: InviteLinkJoinRow, now: Date
): Promise<JoinOutcome> {
  const workspace = await findWorkspace(tx, link.workspaceId)
  const message = `Your address is confirmed. The admins of ${workspace?.name ?? 'the workspace'} will decide; ` +
    'the invitation comes by e-mail.'
  // Asking again while a request for this address is pending is not a new request (nor a use).
  if (await findPendingInviteRequest(tx, { workspaceId: link.workspaceId, email: join.email, now }) !== null) {
    return { kind: 'requested', message }
  }
  await countUse(tx, link, now)
  const { row, created } = await insertInviteRequest(tx, {
    workspaceId: link.workspaceId,
    email: join.email,
    role: link.role,
    requestedBy: null,
    expiresAt: new Date(now.getTime() + REQUEST_TTL_MS),
    now
  })
  if (created) {
    // Not a member yet: the actor is the proven address, through the web door.
    await deps.events.record(tx, {
      workspaceId: link.workspaceId,
      action: 'invite_request.created',
      actor: { type: 'system', id: null, label: join.email, source: 'web', requestId: null },
      target: { type: 'invite_request', id: row.id },
      payload: { email: join.email, role: link.role, inviteLinkId: link.id },
      now
    })
  }
  return { kind: 'requested', message }
}
