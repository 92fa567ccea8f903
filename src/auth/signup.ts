import type { Ports } from '../ports/index.js'
import {
  effectiveStatus, findInvitationByTokenHash, markInvitationAccepted, markInvitationViewed, type InvitationRow
} from '../db/invitations.js'
import { findUserByEmail, findUserInWorkspace, insertUser } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import { serviceError } from '../errors.js'
import { hashToken } from '../lib/tokens.js'
import type { SessionService } from '../sessions/service.js'
import type { components } from '../generated/openapi.js'
import { loadMe, type Me } from '../members/directory.js'
import { tellInviter } from '../invitations/inviter-notice.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Queryable } from '../db/client.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import { refuseWhenSsoRequired } from './sso-required.js'

export type InvitationPreview = components['schemas']['InvitationPreview']

/** The invitation a token names, if it may still be accepted; otherwise the registry error. */
function usable (inv: InvitationRow | null, now: Date): InvitationRow {
  // A revoked or re-sent invitation has no (or another) token hash: indistinguishable from forged.
  if (inv === null || inv.status === 'revoked') throw serviceError('TOKEN_INVALID')
  if (inv.status === 'accepted') throw serviceError('TOKEN_USED')
  if (effectiveStatus(inv, now) === 'expired') throw serviceError('TOKEN_EXPIRED')
  return inv
}

/**
 * What the signup page shows before anyone accepts. Its first call for an invitation is the
 * first human open of the link (the page's script posts it; a link scanner's GET of the page
 * does not, and a cross-site POST is refused): it records `viewedAt` and `invitation.viewed`,
 * once; later previews record nothing.
 */
export async function previewInvitation (
  deps: Pick<Ports, 'db' | 'clock' | 'events'>,
  token: string
): Promise<InvitationPreview> {
  const { db, clock } = deps
  const inv = usable(await findInvitationByTokenHash(db, hashToken(token)), clock.now())
  // At a domain that requires SSO the invitation is accepted by signing in there: the page says so.
  await refuseWhenSsoRequired(db, inv.email)
  const [workspace, inviter] = await Promise.all([
    findWorkspace(db, inv.workspaceId),
    inv.invitedBy !== null ? findUserInWorkspace(db, inv.workspaceId, inv.invitedBy) : null
  ])
  if (workspace === null) throw serviceError('TOKEN_INVALID')
  if (inv.viewedAt === null) await recordViewed(deps, inv.id)
  return {
    workspace: { id: workspace.id, name: workspace.name },
    email: inv.email,
    role: inv.role,
    expiresAt: inv.expiresAt.toISOString(),
    invitedBy: inviter !== null ? (inviter.name ?? inviter.email) : null
  }
}

async function recordViewed (deps: Pick<Ports, 'db' | 'clock' | 'events'>, invitationId: string): Promise<void> {
  await deps.db.transaction(async tx => {
    const now = deps.clock.now()
    // Of two first opens at once, one updates the row: one event.
    const viewed = await markInvitationViewed(tx, invitationId, now)
    if (viewed === null) return
    // The invitee has no account yet: the actor is named by the invited address, on the web door.
    const actor = { type: 'system' as const, id: null, label: viewed.email, source: 'web' as const, requestId: null }
    await deps.events.record(tx, {
      workspaceId: viewed.workspaceId,
      action: 'invitation.viewed',
      actor,
      target: { type: 'invitation', id: viewed.id },
      payload: { email: viewed.email, role: viewed.role },
      now
    })
  })
}

/**
 * Accept an invitation: create the user with the invited role in the inviting workspace, consume
 * the token and start a session, all in one transaction (with its audit events).
 */
export async function acceptInvitation (
  deps: Pick<Ports, 'db' | 'clock' | 'events' | 'log' | 'inviterNotices'> & { sessions: SessionService },
  input: { token: string, name?: string | undefined }
): Promise<{ me: Me, token: string }> {
  try {
    const { db, clock, events, sessions } = deps
    const accepted = await db.transaction(
      async tx => await acceptInTransaction(tx, sessions, events, input, clock.now())
    )
    // Committed: the inviter may hear of it (read back, so the setup page's path stays as it is).
    const inv = await findInvitationByTokenHash(db, hashToken(input.token))
    if (inv !== null) {
      tellInviter(deps, {
        kind: 'accepted', workspaceId: inv.workspaceId, invitationId: inv.id, inviterId: inv.invitedBy, email: inv.email
      })
    }
    return accepted
  } catch (err) {
    // The unique e-mail index fired: another account took this address between check and insert.
    if (isUniqueViolation(err)) throw serviceError('USER_EXISTS')
    throw err
  }
}

/** The steps of acceptInvitation inside the caller's transaction (the setup page runs them with its own). */
export async function acceptInTransaction (
  tx: Queryable,
  sessions: SessionService,
  events: EventOutbox,
  input: { token: string, name?: string | undefined },
  now: Date
): Promise<{ me: Me, token: string }> {
  const name = input.name?.trim() === '' ? null : (input.name?.trim() ?? null)
  // FOR UPDATE: a concurrent accept of the same token waits here, then sees 'accepted'.
  const inv = usable(await findInvitationByTokenHash(tx, hashToken(input.token), { forUpdate: true }), now)
  // The e-mailed link is refused at a domain that requires SSO (an SSO sign-in accepts it instead).
  await refuseWhenSsoRequired(tx, inv.email)
  return await acceptLockedInvitation(tx, sessions, events, { inv, name }, now)
}

/**
 * The invitation, usable and locked by the caller, accepted: the member, their session and the
 * three events of every acceptance. An SSO sign-in of an invited address comes through here too.
 */
export async function acceptLockedInvitation (
  tx: Queryable,
  sessions: SessionService,
  events: EventOutbox,
  { inv, name }: { inv: InvitationRow, name: string | null },
  now: Date
): Promise<{ me: Me, token: string }> {
  if (await findUserByEmail(tx, inv.email) !== null) throw serviceError('USER_EXISTS')
  const user = await insertUser(tx, { workspaceId: inv.workspaceId, email: inv.email, name, role: inv.role, now })
  if (!await markInvitationAccepted(tx, inv.id, user.id, now)) throw serviceError('TOKEN_USED')
  const session = await sessions.start(tx, user.id, 'signup')
  // Accepting is a browser step (the signup and setup pages post it): the web door.
  const actor = { type: 'user' as const, id: user.id, label: user.email, source: 'web' as const, requestId: null }
  // One person, three events: the invitation is used up, a member joins, and a session starts.
  const by = { workspaceId: inv.workspaceId, actor, now }
  const accepted = { type: 'invitation' as const, id: inv.id }
  const acceptedBy = { userId: user.id, role: inv.role }
  await events.record(tx, { ...by, action: 'invitation.accepted', target: accepted, payload: acceptedBy })
  const joined = { email: user.email, role: inv.role, invitationId: inv.id }
  await events.record(tx, { ...by, action: 'member.joined', target: { type: 'user', id: user.id }, payload: joined })
  const login = { type: 'session' as const, id: session.sessionId }
  await events.record(tx, { ...by, action: 'session.login', target: login, payload: { method: 'signup' } })
  return { me: await loadMe(tx, inv.workspaceId, user.id), token: session.token }
}
