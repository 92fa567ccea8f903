import type { Ports } from '../ports/index.js'
import { findActiveSession } from '../db/sessions.js'
import type { SessionService } from '../sessions/service.js'
import type { Principal } from '../principal.js'
import { acceptInvitation, previewInvitation, type InvitationPreview } from './signup.js'
import { createLoginLinks, type AtSsoDomain, type LoginLinkPreview } from './login-link.js'
import { createIdentityProviderLogin, type IdentityProviderLogin } from '../idp/login.js'
import { loadMe, type Me } from '../members/directory.js'

/** Sign-up, sign-in and sign-out; the people side of sessions. */
export interface AuthService {
  previewInvitation(token: string): Promise<InvitationPreview>
  /** Accept an invitation: returns the new user and the session cookie value. */
  signup(input: { token: string, name?: string | undefined }): Promise<{ me: Me, token: string }>
  /**
   * Schedules a login link bound to a browser's secret; reveals nothing about the address (see
   * login-link.ts). At a domain that requires SSO: SSO_REQUIRED, or with `admins` a link for an admin only.
   */
  requestLoginLink(email: string, browser: string | null, atSsoDomain: AtSsoDomain): Promise<void>
  previewLoginLink(token: string, browser: string | null): Promise<LoginLinkPreview>
  verifyLoginLink(token: string): Promise<{ me: Me, token: string }>
  /** Revoke the session a cookie names, if it is live. Returns whether one was revoked. */
  logout(cookieToken: string | undefined): Promise<boolean>
  me(principal: Principal): Promise<Me>
  readonly identityProvider: IdentityProviderLogin
  /** Resolves when the login links scheduled so far have been delivered (or have failed). */
  idle(): Promise<void>
  close(): Promise<void>
}

/** Everything the sign-in paths use: login links, sign-up, the identity provider. */
export type AuthDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'mailer' | 'log' | 'events' | 'inviterNotices'>
  & { sessions: SessionService, unknownAddress?: (email: string, browser: string | null) => Promise<void> }

export function createAuthService (deps: AuthDeps): AuthService {
  const { db, clock, events, sessions } = deps
  const loginLinks = createLoginLinks(deps)
  return {
    previewInvitation: async token => await previewInvitation(deps, token),
    signup: async input => await acceptInvitation(deps, input),
    requestLoginLink: async (email, browser, atSsoDomain) => { await loginLinks.request(email, browser, atSsoDomain) },
    previewLoginLink: async (token, browser) => await loginLinks.preview(token, browser),
    verifyLoginLink: async token => await loginLinks.verify(token),

    async logout (cookieToken) {
      const sid = cookieToken !== undefined && cookieToken !== '' ? sessions.sessionIdOf(cookieToken) : null
      if (sid === null) return false
      return await db.transaction(async tx => {
        const now = clock.now()
        const s = await findActiveSession(tx, sid, now)
        if (s === null || !await sessions.revoke(tx, sid)) return false
        await events.record(tx, {
          workspaceId: s.workspaceId,
          action: 'session.logout',
          actor: { type: 'user', id: s.userId, label: s.email, source: 'web', requestId: null },
          target: { type: 'session', id: sid },
          now
        })
        return true
      })
    },

    me: async p => await loadMe(db, p.workspaceId, p.userId),
    identityProvider: createIdentityProviderLogin(deps),
    idle: async () => { await loginLinks.idle() },
    async close () { await loginLinks.idle() }
  }
}
