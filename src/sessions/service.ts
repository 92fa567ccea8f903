import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { findActiveSession, insertSession, revokeSession, type SessionMethod } from '../db/sessions.js'
import type { Principal } from '../principal.js'
import { isUuid } from '../lib/uuid.js'
import { serviceError } from '../errors.js'

export const SESSION_COOKIE = 'service_session'

export interface SessionService {
  /**
   * Creates the session row (in the caller's transaction) and returns the cookie value. Only for
   * an active member (TOKEN_INVALID otherwise, as for an unknown link): their row stays locked
   * until the transaction ends, so a suspension racing the sign-in ends this session too.
   */
  start(tx: Queryable, userId: string, method: SessionMethod): Promise<{ sessionId: string, token: string }>
  /** The principal named by a cookie value, or null when the token or the session is not valid now. */
  authenticate(token: string): Promise<Principal | null>
  /** The session id inside a token that verifies, whatever the state of its row. */
  sessionIdOf(token: string): string | null
  revoke(q: Queryable, sessionId: string): Promise<boolean>
  readonly ttlSeconds: number
}

export function createSessionService (
  deps: Pick<Ports, 'db' | 'clock' | 'signer' | 'config'>
): SessionService {
  const { db, clock, signer } = deps
  const ttlSeconds = deps.config.session.ttlSeconds
  const sessionIdOf = (token: string): string | null => {
    let payload: { sid?: unknown }
    try {
      payload = signer.verify(token)
    } catch {
      return null
    }
    return typeof payload.sid === 'string' && isUuid(payload.sid) ? payload.sid : null
  }
  return {
    ttlSeconds,
    sessionIdOf,
    async start (tx, userId, method) {
      const now = clock.now()
      const session = await insertSession(
        tx, { userId, method, now, expiresAt: new Date(now.getTime() + ttlSeconds * 1000) }
      )
      // Suspended or removed since the door checked: the link or code that led here is as good as unknown.
      if (session === null) throw serviceError('TOKEN_INVALID')
      return { sessionId: session.id, token: signer.sign({ sid: session.id }) }
    },
    async authenticate (token) {
      const sid = sessionIdOf(token)
      if (sid === null) return null
      // The row decides: logout, revocation, removal and role changes take effect at once.
      const s = await findActiveSession(db, sid, clock.now())
      if (s === null) return null
      return {
        kind: 'session',
        userId: s.userId,
        workspaceId: s.workspaceId,
        email: s.email,
        name: s.name,
        role: s.role,
        sessionId: s.sessionId,
        apiKeyId: null,
        requestId: null
      }
    },
    async revoke (q, sessionId) {
      return await revokeSession(q, sessionId, clock.now())
    }
  }
}
