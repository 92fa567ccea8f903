import type { Queryable } from '../db/client.js'
import { consumeOAuthState, insertOAuthState, type OAuthStateKind, type OAuthStateRow } from '../db/oauth-states.js'
import { serviceError } from '../errors.js'
import { hashToken, randomToken, safeEqual } from '../lib/tokens.js'

// The OAuth `state` of the browser redirect flows (identity-provider login, Slack install), one
// mechanism for both: the browser holds the state in an HttpOnly cookie, the database holds its
// hash and what it is bound to (single use, 10 minutes). A callback must present both.

export const OAUTH_STATE_TTL_MS = 10 * 60_000

/** A fresh state for `kind`, stored as a hash with what it is bound to; the caller sets the cookie. */
export async function issueOAuthState (
  db: Queryable,
  now: Date,
  kind: OAuthStateKind,
  binding: { workspaceId: string | null, userId: string | null }
): Promise<string> {
  const state = randomToken()
  await insertOAuthState(
    db, { stateHash: hashToken(state), kind, ...binding, expiresAt: new Date(now.getTime() + OAUTH_STATE_TTL_MS), now }
  )
  return state
}

/**
 * Checks the state a callback presents (query and cookie must agree) and uses it up; throws
 * OAUTH_STATE_INVALID saying why. Returns what the state was bound to.
 */
export async function consumeBrowserOAuthState (
  db: Queryable,
  now: Date,
  kind: OAuthStateKind,
  presented: { cookieState: string | undefined, queryState: string | undefined }
): Promise<OAuthStateRow> {
  const invalid = (why: string) => serviceError('OAUTH_STATE_INVALID', [why])
  const { cookieState, queryState } = presented
  if (queryState === undefined || queryState === '') throw invalid('the state parameter is missing')
  if (cookieState === undefined || cookieState === '') throw invalid('this browser did not start the sign-in')
  if (!safeEqual(cookieState, queryState)) throw invalid('the state does not match this browser')
  const consumed = await consumeOAuthState(db, hashToken(queryState), kind, now)
  if ('reason' in consumed) {
    throw invalid(
      {
        unknown: 'the state is unknown',
        used: 'the state was already used',
        expired: 'the state has expired'
      }[consumed.reason]
    )
  }
  return consumed
}
