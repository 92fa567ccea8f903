import { emailAddress } from '../lib/email.js'
import { renderEmail, say } from '../emails/shell.js'
import { readerFor } from '../emails/reader.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { windowSpent } from '../lib/window-counter.js'
import { findWorkspace } from '../db/workspaces.js'
import {
  findInviteLinkByCodeHash, insertInviteLinkJoinWithinBudget, inviteLinkStatus, oldestInviteLinkJoinSince
} from '../db/invite-links.js'
import { refuseWhenSsoRequired } from '../auth/sso-required.js'
import { joinUrl, requireAllowedDomain, usableLink, type InviteLinkDeps } from './context.js'

// The visitor's side, before anyone joins: the page's state (a read: scanners open links), and
// asking to join, which e-mails a confirmation link to the address. Nothing about the workspace
// but its name is shown; nothing says whether the address already belongs to someone.

/** A confirmation works once, for a day. */
const JOIN_CONFIRMATION_TTL_MS = 24 * 3_600_000
const BUDGET_WINDOW_MS = 3_600_000

export type JoinPageState =
  | { state: 'open', workspaceName: string, requiresApproval: boolean }
  | { state: 'not_found' | 'expired' | 'used_up' }

/** What `/join/{code}` shows: reads only. */
export async function joinPageState (deps: InviteLinkDeps, code: string): Promise<JoinPageState> {
  const link = await findInviteLinkByCodeHash(deps.db, hashToken(code))
  const status = link === null ? 'revoked' : inviteLinkStatus(link, deps.clock.now())
  if (link === null || status === 'revoked') return { state: 'not_found' }
  if (status !== 'active') return { state: status }
  const workspace = await findWorkspace(deps.db, link.workspaceId)
  if (workspace === null) return { state: 'not_found' }
  return { state: 'open', workspaceName: workspace.name, requiresApproval: link.requiresApproval }
}

/**
 * Ask to join: within the link's hourly budget, a single-use confirmation (24 hours) is recorded
 * and e-mailed to the address. The address's domain is checked here and again once it is proven.
 */
export async function requestJoin (
  deps: InviteLinkDeps, code: string, input: { email: string, name?: string | undefined, browser: string | null }
): Promise<void> {
  const { db, clock, config } = deps
  const now = clock.now()
  const link = await usableLink(db, code, now)
  const email = emailAddress(input.email)
  requireAllowedDomain(link, email)
  // By domain only, as the sign-in form: it says nothing about the address (src/auth/sso-required.ts).
  await refuseWhenSsoRequired(db, email)
  const name = input.name?.trim() === '' ? null : (input.name?.trim() ?? null)
  const token = randomToken(32)
  const since = new Date(now.getTime() - BUDGET_WINDOW_MS)
  const max = config.inviteLinkJoinsPerHour
  const recorded = await db.transaction(async tx => await insertInviteLinkJoinWithinBudget(tx, {
    linkId: link.id,
    codeHash: link.codeHash,
    email,
    name,
    tokenHash: hashToken(token),
    // The asking browser (its login_link_browser secret): the confirmation page says if another opens it.
    browserHash: input.browser === null ? null : hashToken(input.browser),
    expiresAt: new Date(now.getTime() + JOIN_CONFIRMATION_TTL_MS),
    now,
    since,
    max
  }))
  if (!recorded) {
    const oldest = await oldestInviteLinkJoinSince(db, link.id, since)
    deps.log.warn({ inviteLinkId: link.id }, 'join refused: the invite link spent INVITE_LINK_JOINS_PER_HOUR')
    throw windowSpent(max, (oldest?.getTime() ?? now.getTime()) + BUDGET_WINDOW_MS - now.getTime())
  }
  // In the link's language, else the workspace's.
  const reader = await readerFor(db, config, link.workspaceId, link.locale)
  const url = `${joinUrl(deps, code)}?confirm=${encodeURIComponent(token)}`
  const approval = link.requiresApproval ? 'yes' : 'no'
  await deps.mailer.send(renderEmail(reader, {
    to: email,
    subject: say(reader, 'linkJoin.subject'),
    heading: say(reader, 'linkJoin.heading'),
    blocks: [
      { kind: 'text', text: say(reader, 'linkJoin.lead', { hours: JOIN_CONFIRMATION_TTL_MS / 3_600_000 }) },
      { kind: 'action', label: say(reader, 'linkJoin.action', { approval }), url },
      ...(link.requiresApproval ? [{ kind: 'note' as const, text: say(reader, 'linkJoin.approval') }] : []),
      { kind: 'note', text: say(reader, 'linkJoin.notYou') }
    ],
    link: url
  }))
}
