import { serviceError } from '../errors.js'
import type { components } from '../generated/openapi.js'
import { hashToken, sameBrowser } from '../lib/tokens.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Queryable } from '../db/client.js'
import { findUserByEmail } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { findPendingInviteRequest } from '../db/invite-requests.js'
import { requestToJoin } from '../invite-requests/self-request.js'
import type { InviteRequestNotice } from '../invite-requests/context.js'
import {
  consumeInviteLinkJoin, findInviteLinkByCodeHash, findInviteLinkJoin, useInviteLink,
  type InviteLinkJoinRow, type InviteLinkRow
} from '../db/invite-links.js'
import type { Me } from '../members/directory.js'
import { joinAsMember } from '../members/join.js'
import { refuseWhenSsoRequired } from '../auth/sso-required.js'
import { refuseUnusable, requireAllowedDomain, usableLink, type InviteLinkDeps } from './context.js'

// The address is proven (the e-mailed token came back): one transaction uses the confirmation,
// checks the domain on the proven address, counts the link's use (one guarded UPDATE) and then
// either makes the member and their session, or an invite request for the admins.

export type JoinOutcome =
  | { kind: 'joined', me: Me, token: string }
  | { kind: 'requested', message: string }

const REFUSAL = { used: 'TOKEN_USED', expired: 'TOKEN_EXPIRED', unknown: 'TOKEN_INVALID' } as const

export async function confirmJoin (deps: InviteLinkDeps, code: string, token: string): Promise<JoinOutcome> {
  let notice: InviteRequestNotice | null = null
  try {
    const outcome = await deps.db.transaction(async tx => {
      const now = deps.clock.now()
      const link = await usableLink(tx, code, now)
      const join = await consumeInviteLinkJoin(
        tx, { linkId: link.id, codeHash: link.codeHash, tokenHash: hashToken(token), now }
      )
      if ('reason' in join) throw serviceError(REFUSAL[join.reason])
      requireAllowedDomain(link, join.email)
      await refuseWhenSsoRequired(tx, join.email)
      if (!link.requiresApproval) return await joinNow(deps, tx, link, join, now)
      const asked = await requestApproval(deps, tx, link, join, now)
      notice = asked.notice
      return asked.outcome
    })
    if (notice !== null) deps.notifyRequest(notice)
    return outcome
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
): Promise<{ outcome: JoinOutcome, notice: InviteRequestNotice | null }> {
  const workspace = await findWorkspace(tx, link.workspaceId)
  const outcome: JoinOutcome = {
    kind: 'requested',
    message: `Your address is confirmed. The admins of ${workspace?.name ?? 'the workspace'} will decide; ` +
      'the invitation comes by e-mail.'
  }
  // Asking again while a request for this address is pending is not a new request (nor a use).
  if (await findPendingInviteRequest(tx, { workspaceId: link.workspaceId, email: join.email, now }) !== null) {
    return { outcome, notice: null }
  }
  await countUse(tx, link, now)
  const { notice } = await requestToJoin(
    deps, tx, { workspaceId: link.workspaceId, email: join.email, role: link.role }, { inviteLinkId: link.id }, now
  )
  return { outcome, notice }
}

export type JoinConfirmationPreview = components['schemas']['JoinConfirmationPreview']

/**
 * What confirming would do, without using the confirmation (the page shows it before the click,
 * and mail scanners open links): the address it proves — the account a join signs this browser
 * in to — the workspace, whether the admins are asked instead, and whether `browser` (the
 * opening browser's secret) is the one that asked for it.
 */
export async function previewConfirmation (
  deps: InviteLinkDeps, code: string, token: string, browser: string | null
): Promise<JoinConfirmationPreview> {
  const now = deps.clock.now()
  const link = await usableLink(deps.db, code, now)
  const join = await findInviteLinkJoin(
    deps.db, { linkId: link.id, codeHash: link.codeHash, tokenHash: hashToken(token) }
  )
  if (join === null) throw serviceError('TOKEN_INVALID')
  if (join.usedAt !== null) throw serviceError('TOKEN_USED')
  if (join.expiresAt.getTime() <= now.getTime()) throw serviceError('TOKEN_EXPIRED')
  await refuseWhenSsoRequired(deps.db, join.email)
  const workspace = await findWorkspace(deps.db, link.workspaceId)
  if (workspace === null) throw serviceError('NOT_FOUND', ['Invite link'])
  return {
    email: join.email,
    workspace: { id: workspace.id, name: workspace.name },
    requiresApproval: link.requiresApproval,
    expiresAt: join.expiresAt.toISOString(),
    sameBrowser: sameBrowser(browser, join.browserHash)
  }
}
