import type { Ports } from '../ports/index.js'
import type { SessionService } from '../sessions/service.js'
import type { Keyring } from '../lib/crypto.js'
import { serviceError, type ServiceError } from '../errors.js'
import { findSsoConnectionById, type SsoConnectionRow } from '../db/sso-connections.js'
import { isUuid } from '../lib/uuid.js'
import type { OidcCache } from './oidc-cache.js'
import type { ProviderFetchOptions } from './oidc-fetch.js'

// What the SSO sign-in parts share (sign-in.ts, sign-in-flow.ts, sign-in-member.ts): their
// dependencies, and the one way a sign-in is refused — a short code in an audit line of the
// connection's workspace, nothing signed in, and an answer that says the code and nothing more.

export type SsoSignInDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'events' | 'log' | 'inviterNotices'> & {
  sessions: SessionService
  /** The at-rest key: client secrets (connection-secret.ts) and the flows' PKCE verifiers. */
  key: Keyring
  /** Discovery, JWKS and token requests: SSO_ALLOWED_HOSTS, http to loopback only where allowed. */
  fetch: ProviderFetchOptions
  cache: OidcCache
}

/** Why a sign-in was refused: the OIDC and SAML modules' codes, and ours. */
export type RefusalCode = string

/** What a person is told: one reason for every way of not being a member (suspended included). */
const ANSWERED: Record<string, string> = {
  suspended: 'not_a_member',
  other_workspace: 'not_a_member',
  not_a_member: 'not_a_member'
}

export class SsoRefusal extends Error {
  constructor (readonly code: RefusalCode, readonly connection: SsoConnectionRow | null) {
    super(`SSO sign-in refused: ${code}`)
  }
}

/** The error a client sees for a refusal: SSO_SIGN_IN_REFUSED with the short reason. */
function refusedAnswer (code: RefusalCode): ServiceError {
  return serviceError('SSO_SIGN_IN_REFUSED', [], { reason: ANSWERED[code] ?? code })
}

/** The audit line of a refusal (when the connection is known), then the answer to throw. */
export async function auditRefusal (
  deps: SsoSignInDeps, refusal: SsoRefusal, context: { purpose: string, email?: string | null }
): Promise<ServiceError> {
  const connection = refusal.connection
  deps.log.info({ code: refusal.code, connectionId: connection?.id ?? null }, 'SSO sign-in refused')
  if (connection !== null) {
    await deps.events.record(deps.db, {
      workspaceId: connection.workspaceId,
      action: 'sso.sign_in_refused',
      actor: { type: 'system', id: null, label: context.email ?? null, source: 'web', requestId: null },
      target: { type: 'sso_connection', id: connection.id },
      payload: { code: refusal.code, protocol: connection.protocol, purpose: context.purpose },
      now: deps.clock.now()
    })
  }
  return refusedAnswer(refusal.code)
}

export async function connectionById (deps: Pick<SsoSignInDeps, 'db'>, id: string): Promise<SsoConnectionRow | null> {
  return isUuid(id) ? await findSsoConnectionById(deps.db, id) : null
}
