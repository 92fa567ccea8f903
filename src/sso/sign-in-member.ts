import type { Queryable } from '../db/client.js'
import { isUniqueViolation } from '../db/errors.js'
import { lockPendingInvitationFor } from '../db/invitations.js'
import { findSsoIdentity, insertSsoIdentity, touchSsoIdentity } from '../db/sso-identities.js'
import type { SsoConnectionRow } from '../db/sso-connections.js'
import { findUserByEmail } from '../db/users.js'
import { acceptLockedInvitation } from '../auth/signup.js'
import { domainOfEmail } from '../domains/name.js'
import { storedAddress } from '../lib/email.js'
import { joinAsMember } from '../members/join.js'
import { tellInviter } from '../invitations/inviter-notice.js'
import type { InvitationRow } from '../db/invitations.js'
import { SsoRefusal, type SsoSignInDeps } from './sign-in-context.js'

// Who signs in once a connection's provider has been believed (sign-in.ts). An identity
// is (connection, issuer, subject): a linked identity signs its member in whatever address it now
// states. A first sign-in is linked by address only when the address is at one of the
// connection's verified domains and the provider vouches for it; then the member holding it, or
// an invitation pending for it (accepted as the signup page accepts it), or — when the connection
// creates accounts — a new member joining as every join does. Suspended members, other
// workspaces' people and strangers all get one answer. A refusal rolls the transaction back.

export interface ProviderIdentity {
  issuer: string
  subject: string
  email: string | null
  name: string | null
  /** The provider vouches that `email` is the person's (OIDC: vouchesFor; SAML: the pinned IdP at a served domain). */
  vouched: boolean
}

async function startSession (
  deps: SsoSignInDeps, tx: Queryable, connection: SsoConnectionRow,
  user: { id: string, email: string }, now: Date
): Promise<{ token: string }> {
  const session = await deps.sessions.start(tx, user.id, 'identity_provider')
  await deps.events.record(tx, {
    workspaceId: connection.workspaceId,
    action: 'session.login',
    actor: { type: 'user', id: user.id, label: user.email, source: 'web', requestId: null },
    target: { type: 'session', id: session.sessionId },
    payload: { method: 'sso', connectionId: connection.id },
    now
  })
  return { token: session.token }
}

interface Decided { token: string, accepted?: InvitationRow }

async function decide (
  deps: SsoSignInDeps, tx: Queryable, connection: SsoConnectionRow, identity: ProviderIdentity
): Promise<Decided> {
  const now = deps.clock.now()
  const refuse = (code: string): never => { throw new SsoRefusal(code, connection) }
  const key = { connectionId: connection.id, issuer: identity.issuer, subject: identity.subject }
  const linked = await findSsoIdentity(tx, key)
  if (linked !== null) {
    if (linked.workspaceId !== connection.workspaceId || linked.status === 'removed') refuse('not_a_member')
    if (linked.status !== 'active') refuse('suspended')
    await touchSsoIdentity(tx, linked.id, now)
    return await startSession(deps, tx, connection, { id: linked.userId, email: linked.email }, now)
  }
  const email = identity.email === null ? null : storedAddress(identity.email)
  if (email === null) return refuse('no_email')
  if (!connection.domains.includes(domainOfEmail(email))) refuse('domain_not_served')
  if (!identity.vouched) refuse('email_not_verified')
  const existing = await findUserByEmail(tx, email)
  if (existing !== null) {
    if (existing.workspaceId !== connection.workspaceId) refuse('other_workspace')
    if (existing.status !== 'active') refuse('suspended')
    await insertSsoIdentity(tx, { ...key, userId: existing.id, now })
    return await startSession(deps, tx, connection, existing, now)
  }
  const invitation = await lockPendingInvitationFor(tx, connection.workspaceId, email, now)
  if (invitation !== null) {
    const accepted = await acceptLockedInvitation(
      tx, deps.sessions, deps.events, { inv: invitation, name: identity.name }, now
    )
    await insertSsoIdentity(tx, { ...key, userId: accepted.me.user.id, now })
    return { token: accepted.token, accepted: invitation }
  }
  if (connection.accounts !== 'create' || connection.defaultRole === null) return refuse('not_a_member')
  const joined = await joinAsMember(
    deps, tx,
    { workspaceId: connection.workspaceId, email, name: identity.name, role: connection.defaultRole },
    { connectionId: connection.id }, now
  )
  await insertSsoIdentity(tx, { ...key, userId: joined.me.user.id, now })
  return { token: joined.token }
}

/** Signs in (or makes) the member `identity` names through `connection`; throws SsoRefusal. */
export async function signInMember (
  deps: SsoSignInDeps, connection: SsoConnectionRow, identity: ProviderIdentity
): Promise<{ token: string }> {
  const once = async (): Promise<Decided> =>
    await deps.db.transaction(async tx => await decide(deps, tx, connection, identity))
  let decided: Decided
  try {
    decided = await once()
  } catch (err) {
    // Two first sign-ins of one identity (or address) raced on a unique key: the second finds the first's row.
    if (!isUniqueViolation(err)) throw err
    decided = await once()
  }
  const inv = decided.accepted
  // Committed: the inviter hears of it, as after the signup page's acceptance.
  if (inv !== undefined) {
    tellInviter(deps, {
      kind: 'accepted', workspaceId: inv.workspaceId, invitationId: inv.id, inviterId: inv.invitedBy, email: inv.email
    })
  }
  return { token: decided.token }
}
