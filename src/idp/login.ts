import { OauthException, type WorkOS } from '@workos-inc/node'
import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { findUserByEmail, insertUser, setUserWorkosId, type UserRow } from '../db/users.js'
import { storedAddress } from '../lib/email.js'
import { findWorkspaceByOrganization } from '../db/workspaces.js'
import { serviceError } from '../errors.js'
import { consumeBrowserOAuthState, issueOAuthState } from '../oauth/state.js'
import { createWorkOS } from './workos-client.js'
import type { SessionService } from '../sessions/service.js'
import { isUniqueViolation } from '../db/errors.js'

// WorkOS AuthKit login, with the browser-bound `state` of src/oauth/state.ts.

interface CallbackInput {
  cookieState: string | undefined
  query: { code?: string | undefined, state?: string | undefined, error?: string | undefined }
}

export interface IdentityProviderLogin {
  readonly configured: boolean
  /** A fresh state (for the cookie) and the provider's authorization URL carrying it. */
  start(): Promise<{ url: string, state: string }>
  /** Verify the state, exchange the code, upsert the user, start a session. */
  complete(input: CallbackInput): Promise<{ token: string }>
}

interface IdpUser {
  id: string,
  email: string,
  emailVerified: boolean,
  firstName: string | null,
  lastName: string | null
}

/** The user this identity signs in as: the existing account for the e-mail, or a new member. */
async function upsertUser (
  tx: Queryable,
  idp: IdpUser,
  organizationId: string | null,
  now: Date
): Promise<{ user: UserRow, created: boolean }> {
  const forbidden = (reason: string) => serviceError('FORBIDDEN', ['workspace member'], { reason })
  // Accounts are matched by e-mail, so only an address the provider has verified may match.
  if (!idp.emailVerified) throw forbidden('the identity provider has not verified this e-mail address')
  const email = storedAddress(idp.email)
  if (email === null) throw forbidden('the identity provider\'s e-mail address is not one this service accepts')
  const existing = await findUserByEmail(tx, email)
  if (existing !== null) {
    if (existing.status !== 'active') throw forbidden('this account is disabled')
    if (existing.workosUserId !== null && existing.workosUserId !== idp.id) {
      throw forbidden(
        'this e-mail address is linked to another identity'
      )
    }
    if (existing.workosUserId === null) await setUserWorkosId(tx, existing.id, idp.id, now)
    return { user: existing, created: false }
  }
  const workspace = organizationId !== null ? await findWorkspaceByOrganization(tx, organizationId) : null
  if (workspace === null) {
    throw forbidden(
      'no workspace is linked to your organization; ask an admin for an invitation'
    )
  }
  const name = [idp.firstName, idp.lastName].filter(s => s !== null && s !== '').join(' ')
  const user = await insertUser(
    tx,
    {
      workspaceId: workspace.id,
      email,
      name: name === '' ? null : name,
      role: 'member',
      workosUserId: idp.id,
      now
    }
  )
  return { user, created: true }
}

export function createIdentityProviderLogin (
  deps: Pick<Ports, 'db' | 'clock' | 'config' | 'log' | 'events'> & { sessions: SessionService }
): IdentityProviderLogin {
  const { db, clock, log, events, sessions } = deps
  const cfg = deps.config.workos
  let client: WorkOS | undefined
  const workos = (): WorkOS => (client ??= createWorkOS(cfg as NonNullable<typeof cfg>))
  const notConfigured = () => serviceError('IDENTITY_PROVIDER_NOT_CONFIGURED')

  async function exchange (code: string): Promise<{ user: IdpUser, organizationId: string | null }> {
    if (cfg === null) throw notConfigured()
    try {
      // Bounded by the SDK's `timeout` option (WORKOS_TIMEOUT_MS, see workos-client.ts).
      const r = await workos().userManagement.authenticateWithCode({ code, clientId: cfg.clientId })
      return { user: r.user, organizationId: r.organizationId ?? null }
    } catch (err) {
      // invalid_grant and friends: the code is bad, expired or replayed — the browser's problem.
      if (err instanceof OauthException && err.status === 400) {
        log.info({ error: err.error }, 'identity provider refused the authorization code')
        throw serviceError('OAUTH_STATE_INVALID', ['the identity provider did not accept the authorization code'])
      }
      log.warn(
        { err: (err as Error).message, status: (err as { status?: unknown }).status },
        'identity provider code exchange failed'
      )
      throw serviceError('UPSTREAM_FAILED', ['identity provider'])
    }
  }

  async function signIn (idp: IdpUser, organizationId: string | null): Promise<{ token: string }> {
    return await db.transaction(async tx => {
      const now = clock.now()
      const { user, created } = await upsertUser(tx, idp, organizationId, now)
      const session = await sessions.start(tx, user.id, 'identity_provider')
      await events.record(tx, {
        workspaceId: user.workspaceId,
        action: 'session.login',
        actor: { type: 'user', id: user.id, label: user.email, source: 'web', requestId: null },
        target: { type: 'session', id: session.sessionId },
        payload: { method: 'identity_provider', userCreated: created },
        now
      })
      if (created) {
        await events.record(tx, {
          workspaceId: user.workspaceId,
          action: 'member.joined',
          actor: { type: 'user', id: user.id, label: user.email, source: 'web', requestId: null },
          target: { type: 'user', id: user.id },
          payload: { email: user.email, role: user.role },
          now
        })
      }
      return { token: session.token }
    })
  }

  return {
    configured: cfg !== null,

    async start () {
      if (cfg === null) throw notConfigured()
      const state = await issueOAuthState(db, clock.now(), 'identity_provider', { workspaceId: null, userId: null })
      const url = workos().userManagement.getAuthorizationUrl({
        provider: 'authkit',
        clientId: cfg.clientId,
        redirectUri: cfg.redirectUri,
        state
      })
      return { url, state }
    },

    async complete ({ cookieState, query }) {
      if (cfg === null) throw notConfigured()
      const invalid = (why: string) => serviceError('OAUTH_STATE_INVALID', [why])
      await consumeBrowserOAuthState(db, clock.now(), 'identity_provider', { cookieState, queryState: query.state })
      if (query.error !== undefined) throw invalid('the identity provider reported an error')
      if (query.code === undefined || query.code === '') throw invalid('the authorization code is missing')
      const { user, organizationId } = await exchange(query.code)
      try {
        return await signIn(user, organizationId)
      } catch (err) {
        // Two callbacks for one new user raced on the unique e-mail: the second finds the account.
        if (isUniqueViolation(err)) return await signIn(user, organizationId)
        throw err
      }
    }
  }
}
