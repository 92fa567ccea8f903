import type { Ports } from '../ports/index.js'
import { findUserByEmail } from '../db/users.js'
import { emailAddress } from '../lib/email.js'
import { consumeLoginToken, findLoginToken, insertLoginTokenWithinLimit } from '../db/login-tokens.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken, sameBrowser } from '../lib/tokens.js'
import type { SessionService } from '../sessions/service.js'
import { loadMe, type Me } from '../members/directory.js'
import type { MailMessage } from '../ports/mailer.js'
import { renderEmail, say, type Reader } from '../emails/shell.js'
import { readerFor } from '../emails/reader.js'
import { ssoRequired, ssoRequirementOf, type SsoRequirement } from './sso-required.js'
import type { Queryable } from '../db/client.js'
import type { EventOutbox } from '../ports/event-outbox.js'

export const LOGIN_TOKEN_TTL_MS = 15 * 60_000
/** Links per address per window: beyond this the request is still answered 202, nothing is sent. */
export const LOGIN_LINKS_PER_EMAIL = 5
const LOGIN_LINK_WINDOW_MS = 15 * 60_000
const NO_USER = '00000000-0000-0000-0000-000000000000'

/** What a login link's landing page shows before anyone signs in (the contract's LoginLinkPreview). */
export interface LoginLinkPreview {
  email: string
  workspace: { id: string, name: string }
  expiresAt: string
  /** The browser that opened the link is the one that asked for it (its login_link_browser cookie). */
  sameBrowser: boolean
}

/**
 * What a request for an address at a domain that requires SSO does: `refuse` it (SSO_REQUIRED:
 * the sign-in form), or send the link to an active admin only (`admins`: break-glass, asked for
 * explicitly; the directory's welcome e-mail), nothing to anyone else.
 */
export type AtSsoDomain = 'refuse' | 'admins'

export interface LoginLinks {
  /**
   * Schedule a login link for `email`, bound to the browser whose secret is `browser` (the value
   * of its login_link_browser cookie). Looks up the address's domain only, never the address:
   * the caller answers the same 202 in the same time whether or not the address belongs to a user.
   */
  request(email: string, browser: string | null, atSsoDomain: AtSsoDomain): Promise<void>
  /** The account a link signs in to, without using it (mail scanners and the landing page). */
  preview(token: string, browser: string | null): Promise<LoginLinkPreview>
  verify(token: string): Promise<{ me: Me, token: string }>
  /** Waits for scheduled deliveries (graceful shutdown, tests). */
  idle(): Promise<void>
}

/** The sign-in link's e-mail; a break-glass link says why it still works, and that its use is audited. */
function linkMail (reader: Reader, to: string, link: string, sso: SsoRequirement | null): MailMessage {
  return renderEmail(reader, {
    to,
    subject: say(reader, 'signIn.subject'),
    heading: say(reader, 'signIn.heading'),
    blocks: [
      ...(sso === null
        ? []
        : [{ kind: 'text' as const, text: say(reader, 'signIn.breakGlass', { connection: sso.connectionName }) }]),
      { kind: 'text', text: say(reader, 'signIn.lead', { minutes: LOGIN_TOKEN_TTL_MS / 60_000 }) },
      { kind: 'action', label: say(reader, 'signIn.action'), url: link },
      { kind: 'note', text: say(reader, 'unasked') }
    ],
    link
  })
}

/**
 * The audit lines of a sign-in by link: `session.login`, and beside it `sso.break_glass_sign_in`
 * when the address's domain requires SSO (only an admin's link gets this far).
 */
async function recordSignIn (
  events: EventOutbox, tx: Queryable, by: { workspaceId: string, userId: string, email: string, sessionId: string },
  sso: SsoRequirement | null, now: Date
): Promise<void> {
  const entry = {
    workspaceId: by.workspaceId,
    actor: { type: 'user' as const, id: by.userId, label: by.email, source: 'web' as const, requestId: null },
    target: { type: 'session' as const, id: by.sessionId },
    now
  }
  await events.record(tx, { ...entry, action: 'session.login', payload: { method: 'login_link' } })
  if (sso === null) return
  const payload = {
    method: 'login_link', domain: sso.domain, connectionId: sso.connectionId, connection: sso.connectionName
  }
  await events.record(tx, { ...entry, action: 'sso.break_glass_sign_in', payload })
}

export function createLoginLinks (
  deps: Pick<Ports, 'db' | 'clock' | 'config' | 'mailer' | 'log' | 'events'> & {
    sessions: SessionService,
    /** Told of an address that is nobody's (after the limit transaction): a verified domain may let it join. */
    unknownAddress?: ((email: string, browser: string | null) => Promise<void>) | undefined
  }
): LoginLinks {
  const { db, clock, config, mailer, log, events, sessions } = deps
  const pending = new Set<Promise<void>>()

  async function deliver (email: string, browser: string | null, sso: SsoRequirement | null): Promise<void> {
    const user = await findUserByEmail(db, email)
    // At a domain that requires SSO only an admin gets a link (break-glass), anyone else nothing.
    const active = user !== null && user.status === 'active' && (sso === null || user.role === 'admin')
    // The same work whether or not the address is a user's: the work after one answer delays the
    // next request (PGlite shares the event loop), so a difference here is a timing oracle. An
    // unknown address runs the same limit transaction for a user id that matches no row, with a
    // limit of 0: the same queries and lock, nothing inserted.
    const token = randomToken()
    const now = clock.now()
    const inserted = await db.transaction(async tx => await insertLoginTokenWithinLimit(tx, {
      userId: active ? user.id : NO_USER,
      tokenHash: hashToken(token),
      browserHash: browser === null ? null : hashToken(browser),
      expiresAt: new Date(now.getTime() + LOGIN_TOKEN_TTL_MS),
      now,
      since: new Date(now.getTime() - LOGIN_LINK_WINDOW_MS),
      max: active ? LOGIN_LINKS_PER_EMAIL : 0
    }))
    if (!active) {
      // No join by verified domain is offered at a domain that requires SSO either.
      if (user === null && sso === null) await deps.unknownAddress?.(email, browser)
      return
    }
    if (!inserted) {
      log.info({ userId: user.id }, 'login link not sent: per-address limit reached')
      return
    }
    // In the member's language, else the workspace's.
    const reader = await readerFor(db, config, user.workspaceId, user.locale)
    await mailer.send(linkMail(reader, user.email, `${config.appUrl}/login?token=${encodeURIComponent(token)}`, sso))
  }

  return {
    async request (email, browser, atSsoDomain) {
      // The one e-mail rule before anything is looked up or stored (and before the answer: an
      // address the rule refuses is a 400, never a failure in the delivery that only a log sees).
      const address = emailAddress(email)
      // Enumeration: the refusal depends on the address's domain alone — one query by domain, the
      // same for a member, a stranger and an admin at it — so it says that the domain signs in by
      // SSO, which is public anyway (the login page sends such an address to its provider, naming
      // it), and nothing about the address. Break-glass (`admins`) is asked for explicitly and
      // answered 202 for every address at the domain; who is an admin is decided after the answer.
      const sso = await ssoRequirementOf(db, address)
      if (sso !== null && atSsoDomain === 'refuse') throw ssoRequired(sso)
      const p = new Promise<void>(resolve => { setImmediate(resolve) })
        .then(async () => { await deliver(address, browser, sso) })
        .catch((err: unknown) => { log.warn({ err: (err as Error).message }, 'login link delivery failed') })
        .finally(() => { pending.delete(p) })
      pending.add(p)
    },

    async preview (token, browser) {
      const found = await findLoginToken(db, hashToken(token))
      // The same answers as verify, in the same order: an unknown or disabled account first.
      if (found === null || !found.active) throw serviceError('TOKEN_INVALID')
      if (found.usedAt !== null) throw serviceError('TOKEN_USED')
      if (found.expiresAt.getTime() <= clock.now().getTime()) throw serviceError('TOKEN_EXPIRED')
      // A link sent before the domain required SSO: only an admin's still signs in (break-glass).
      const sso = await ssoRequirementOf(db, found.email)
      if (sso !== null && (await findUserByEmail(db, found.email))?.role !== 'admin') throw ssoRequired(sso)
      return {
        email: found.email,
        workspace: found.workspace,
        expiresAt: found.expiresAt.toISOString(),
        sameBrowser: sameBrowser(browser, found.browserHash)
      }
    },

    async verify (token) {
      return await db.transaction(async tx => {
        const now = clock.now()
        const used = await consumeLoginToken(tx, hashToken(token), now)
        if ('reason' in used) {
          throw serviceError(
            used.reason === 'used' ? 'TOKEN_USED' : used.reason === 'expired' ? 'TOKEN_EXPIRED' : 'TOKEN_INVALID'
          )
        }
        const me = await loadMe(tx, used.workspaceId, used.userId)
        // The domain requires SSO: a member's link is refused (the token stays unused), an admin's
        // signs in as break-glass, recorded as such beside the login.
        const sso = await ssoRequirementOf(tx, me.user.email)
        if (sso !== null && me.user.role !== 'admin') throw ssoRequired(sso)
        const session = await sessions.start(tx, used.userId, 'login_link')
        const by = { workspaceId: used.workspaceId, userId: used.userId, email: me.user.email }
        await recordSignIn(events, tx, { ...by, sessionId: session.sessionId }, sso, now)
        return { me, token: session.token }
      })
    },

    async idle () {
      while (pending.size > 0) await Promise.allSettled([...pending])
    }
  }
}
