import type { Ports } from '../ports/index.js'
import { findUserByEmail } from '../db/users.js'
import { emailAddress } from '../lib/email.js'
import { consumeLoginToken, findLoginToken, insertLoginTokenWithinLimit } from '../db/login-tokens.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken, sameBrowser } from '../lib/tokens.js'
import type { SessionService } from '../sessions/service.js'
import { loadMe, type Me } from '../members/directory.js'
import { escapeHtml } from '../lib/html.js'

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

export interface LoginLinks {
  /**
   * Schedule a login link for `email`, bound to the browser whose secret is `browser` (the value
   * of its login_link_browser cookie). Returns at once, before any lookup: the caller answers
   * the same 202 in the same time whether or not the address belongs to a user.
   */
  request(email: string, browser: string | null): void
  /** The account a link signs in to, without using it (mail scanners and the landing page). */
  preview(token: string, browser: string | null): Promise<LoginLinkPreview>
  verify(token: string): Promise<{ me: Me, token: string }>
  /** Waits for scheduled deliveries (graceful shutdown, tests). */
  idle(): Promise<void>
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

  async function deliver (email: string, browser: string | null): Promise<void> {
    const user = await findUserByEmail(db, email)
    const active = user !== null && user.status === 'active'
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
      if (user === null) await deps.unknownAddress?.(email, browser)
      return
    }
    if (!inserted) {
      log.info({ userId: user.id }, 'login link not sent: per-address limit reached')
      return
    }
    const link = `${config.appUrl}/login?token=${encodeURIComponent(token)}`
    await mailer.send({
      to: user.email,
      subject: 'Your sign-in link',
      text: `Sign in by opening this link (valid for 15 minutes, once):\n\n${link}\n\n` +
        'If you did not ask for it, ignore this e-mail.\n',
      html: '<p>Sign in by opening this link (valid for 15 minutes, once):</p>' +
        `<p><a href="${escapeHtml(link)}">Sign in</a></p><p>If you did not ask for it, ignore this e-mail.</p>`,
      link
    })
  }

  return {
    request (email, browser) {
      // The one e-mail rule before anything is looked up or stored (and before the answer: an
      // address the rule refuses is a 400, never a failure in the delivery that only a log sees).
      const address = emailAddress(email)
      const p = new Promise<void>(resolve => { setImmediate(resolve) })
        .then(async () => { await deliver(address, browser) })
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
        const session = await sessions.start(tx, used.userId, 'login_link')
        await events.record(tx, {
          workspaceId: used.workspaceId,
          action: 'session.login',
          actor: { type: 'user', id: used.userId, label: me.user.email, source: 'web', requestId: null },
          target: { type: 'session', id: session.sessionId },
          payload: { method: 'login_link' },
          now
        })
        return { me, token: session.token }
      })
    },

    async idle () {
      while (pending.size > 0) await Promise.allSettled([...pending])
    }
  }
}
