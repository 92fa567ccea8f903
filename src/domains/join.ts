import type { components } from '../generated/openapi.js'
import type { SessionService } from '../sessions/service.js'
import type { Queryable } from '../db/client.js'
import {
  consumeJoinToken, findJoinToken, findJoinableDomain, insertJoinTokenWithinLimit
} from '../db/domains.js'
import { findUserByEmail } from '../db/users.js'
import { isUniqueViolation } from '../db/errors.js'
import { serviceError } from '../errors.js'
import { renderEmail, say } from '../emails/shell.js'
import { readerFor } from '../emails/reader.js'
import { hashToken, randomToken, sameBrowser } from '../lib/tokens.js'
import type { Me } from '../members/directory.js'
import { joinAsMember } from '../members/join.js'
import { requestToJoin } from '../invite-requests/self-request.js'
import type { InviteRequestNotice } from '../invite-requests/context.js'
import { refuseWhenSsoRequired } from '../auth/sso-required.js'
import { domainOfEmail } from './name.js'
import type { DomainDeps } from './context.js'

// Joining through a verified domain. A person with no account asks for a sign-in link on /login
// with an address at a domain a workspace verified (policy suggest or auto_join): instead of
// nothing, that address is e-mailed a join link, which proves the person holds it. The link's
// page (/domain-join) shows what it does and acts only when the person confirms (a POST), so a
// mail scanner opening it changes nothing. auto_join: a member, signed in; suggest: an invite
// request for the admins (the existing approval flow, whose approval e-mails an invitation).

export type DomainJoinPreview = components['schemas']['DomainJoinPreview']
export type DomainJoined = { kind: 'joined', me: Me, token: string } | { kind: 'requested', message: string }

const JOIN_TOKEN_TTL_MS = 15 * 60_000
/** Join links per address per window; past it nothing is sent (the login page's answer is the same). */
const JOIN_LINKS_PER_EMAIL = 5
const JOIN_LINK_WINDOW_MS = 15 * 60_000

/**
 * E-mail a join link to an address with no account, when its domain lets people join; bound to
 * the browser that asked (`browser`: its login_link_browser secret), as a login link is.
 */
export async function offerJoin (deps: DomainDeps, email: string, browser: string | null): Promise<void> {
  const domain = await findJoinableDomain(deps.db, { domain: domainOfEmail(email) })
  if (domain === null) return
  const token = randomToken()
  const now = deps.clock.now()
  const inserted = await deps.db.transaction(async tx => await insertJoinTokenWithinLimit(tx, {
    tokenHash: hashToken(token),
    domainId: domain.id,
    email,
    browserHash: browser === null ? null : hashToken(browser),
    expiresAt: new Date(now.getTime() + JOIN_TOKEN_TTL_MS),
    now,
    since: new Date(now.getTime() - JOIN_LINK_WINDOW_MS),
    max: JOIN_LINKS_PER_EMAIL
  }))
  if (!inserted) {
    deps.log.info({ domainId: domain.id }, 'domain join link not sent: per-address limit reached')
    return
  }
  const link = `${deps.config.appUrl}/domain-join?token=${encodeURIComponent(token)}`
  // Nobody's language is known yet: the workspace's.
  const reader = await readerFor(deps.db, deps.config, domain.workspaceId, null)
  const values = { auto: domain.policy === 'auto_join' ? 'yes' : 'no', email, domain: domain.domain }
  const action = say(reader, 'domainJoin.subject', values)
  await deps.mailer.send(renderEmail(reader, {
    to: email,
    subject: action,
    heading: action,
    blocks: [
      { kind: 'text', text: say(reader, 'domainJoin.lead', values) },
      { kind: 'text', text: say(reader, 'domainJoin.validity', { minutes: JOIN_TOKEN_TTL_MS / 60_000 }) },
      { kind: 'action', label: action, url: link },
      { kind: 'note', text: say(reader, 'unasked') }
    ],
    link
  }))
}

/** Why a join token cannot be used, as the login link's answers say it. */
async function refusal (q: Queryable, tokenHash: string, now: Date): Promise<never> {
  const t = await findJoinToken(q, tokenHash)
  if (t === null) throw serviceError('TOKEN_INVALID')
  if (t.usedAt !== null) throw serviceError('TOKEN_USED')
  if (new Date(t.expiresAt) <= now) throw serviceError('TOKEN_EXPIRED')
  throw serviceError('TOKEN_INVALID')
}

/**
 * What a join link does, without using it (the page, and mail scanners), and whether `browser`
 * (the opening browser's secret) is the one that asked for it.
 */
export async function previewJoin (
  deps: DomainDeps, token: string, browser: string | null
): Promise<DomainJoinPreview> {
  const now = deps.clock.now()
  const tokenHash = hashToken(token)
  const t = await findJoinToken(deps.db, tokenHash)
  if (t === null || t.usedAt !== null || new Date(t.expiresAt) <= now) {
    return await refusal(deps.db, tokenHash, now)
  }
  // The domain was removed, is no longer verified or lets nobody join: the link leads nowhere.
  const domain = await findJoinableDomain(deps.db, { id: t.domainId })
  if (domain === null) throw serviceError('TOKEN_INVALID')
  // A link sent before the domain required SSO: people at it join by signing in there.
  await refuseWhenSsoRequired(deps.db, t.email)
  return {
    email: t.email,
    workspace: { id: domain.workspaceId, name: domain.workspaceName },
    domain: domain.domain,
    policy: domain.policy,
    expiresAt: new Date(t.expiresAt).toISOString(),
    sameBrowser: sameBrowser(browser, t.browserHash)
  }
}

/** Use a join link: the person joins (auto_join) or asks to (suggest), in one transaction. */
export async function confirmJoin (
  deps: DomainDeps & { sessions: SessionService }, input: { token: string, name?: string | undefined }
): Promise<DomainJoined> {
  const name = input.name?.trim() === '' ? null : (input.name?.trim() ?? null)
  let notice: InviteRequestNotice | null = null
  try {
    const outcome = await deps.db.transaction(async tx => {
      const now = deps.clock.now()
      const tokenHash = hashToken(input.token)
      const used = await consumeJoinToken(tx, tokenHash, now)
      if (used === null) return await refusal(tx, tokenHash, now)
      const domain = await findJoinableDomain(tx, { id: used.domainId })
      if (domain === null || domainOfEmail(used.email) !== domain.domain) throw serviceError('TOKEN_INVALID')
      await refuseWhenSsoRequired(tx, used.email)
      if (await findUserByEmail(tx, used.email) !== null) throw serviceError('USER_EXISTS')
      const person = { workspaceId: domain.workspaceId, email: used.email, role: 'member' as const }
      const door = { domain: domain.domain, domainId: domain.id }
      if (domain.policy === 'auto_join') return await joinAsMember(deps, tx, { ...person, name }, door, now)
      notice = (await requestToJoin(deps, tx, person, door, now)).notice
      return {
        kind: 'requested' as const,
        message: `Your request to join ${domain.workspaceName} is with its admins. ` +
          'If they approve, an invitation is e-mailed to you.'
      }
    })
    if (notice !== null) deps.notifyRequest(notice)
    return outcome
  } catch (err) {
    // The unique e-mail index fired: another account took this address between check and insert.
    if (isUniqueViolation(err)) throw serviceError('USER_EXISTS')
    throw err
  }
}
