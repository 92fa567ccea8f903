import { lockClause, type LockOptions, type Queryable } from './client.js'
import type { Role } from './users.js'
import { statusPageQuery } from './status-page.js'

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired'
/** 'not_sent': never e-mailed, and never will be (the setup page's first admin, create-admin without a mailer). */
export type DeliveryStatus = 'pending' | 'sent' | 'failed' | 'identity_provider' | 'not_sent' | 'bounced'

export interface InvitationRow {
  id: string
  workspaceId: string
  email: string
  role: Role
  /** As stored; use effectiveStatus() for what a reader should see (pending past expiry = expired). */
  status: InvitationStatus
  expiresAt: Date
  invitedBy: string | null
  invitedByApiKey: string | null
  deliveryStatus: DeliveryStatus
  deliveryError: string | null
  deliveryAttempts: number
  idpInvitationId: string | null
  lastSentAt: Date | null
  acceptedAt: Date | null
  acceptedUserId: string | null
  revokedAt: Date | null
  /** The first human open of the signup page (its preview request). */
  viewedAt: Date | null
  /** A permanent delivery failure reported after the relay took the e-mail (migration 021). */
  bouncedAt: Date | null
  bounceReason: string | null
  /** When its one reminder was claimed and queued (src/invitations/reminders.ts). */
  remindedAt: Date | null
  /** The invitee's language as the inviter gave it (BCP 47; migration 059); null: the workspace's. */
  locale: string | null
  createdAt: Date
  updatedAt: Date
}

/** The invitation columns as InvitationRow names them (the batch statements return rows too). */
export const INVITATION_COLUMNS = `id, workspace_id AS "workspaceId", email, role, status, expires_at AS "expiresAt",
  invited_by AS "invitedBy", invited_by_api_key AS "invitedByApiKey", delivery_status AS "deliveryStatus",
  delivery_error AS "deliveryError", delivery_attempts AS "deliveryAttempts", idp_invitation_id AS "idpInvitationId",
  last_sent_at AS "lastSentAt", accepted_at AS "acceptedAt", accepted_user_id AS "acceptedUserId",
  revoked_at AS "revokedAt", viewed_at AS "viewedAt", bounced_at AS "bouncedAt", bounce_reason AS "bounceReason",
  reminded_at AS "remindedAt", locale,
  created_at AS "createdAt", updated_at AS "updatedAt"`

export function effectiveStatus (inv: Pick<InvitationRow, 'status' | 'expiresAt'>, now: Date): InvitationStatus {
  return inv.status === 'pending' && inv.expiresAt.getTime() <= now.getTime() ? 'expired' : inv.status
}

export interface NewInvitation {
  workspaceId: string
  email: string
  role: Role
  tokenHash: string | null
  expiresAt: Date
  invitedBy: string | null
  invitedByApiKey?: string | null
  /** 'not_sent': an invitation nobody will e-mail (the setup page's first admin). */
  deliveryStatus?: 'pending' | 'not_sent'
  /** The invitee's language (BCP 47); a re-invite without one keeps the pending invitation's. */
  locale?: string | null
  now: Date
}

/** A send lease (see migration 004): who rotates and sends this invitation now, and until when. */
export interface SendLease { owner: string, until: Date }

/**
 * Insert a pending invitation, or — when one is already pending for this workspace + e-mail —
 * refresh that one (same id, new token, role and expiry). The partial unique index makes this
 * one statement safe under concurrent invites: exactly one pending row results.
 * `created` tells which happened. With `lease`, the same statement takes the send lease, and
 * changes nothing (answers null) while another owner's lease runs: the caller waits for it.
 */
export async function upsertPendingInvitation (
  q: Queryable,
  invitation: NewInvitation
): Promise<InvitationRow & { created: boolean }>
export async function upsertPendingInvitation (
  q: Queryable,
  invitation: NewInvitation,
  lease: SendLease
): Promise<(InvitationRow & { created: boolean }) | null>
export async function upsertPendingInvitation (
  q: Queryable, invitation: NewInvitation, lease?: SendLease
): Promise<(InvitationRow & { created: boolean }) | null> {
  const r = await q.query<InvitationRow & { created: boolean }>(
    `INSERT INTO invitations (workspace_id, email, role, token_hash, expires_at, invited_by, invited_by_api_key,
                              created_at, updated_at, send_owner, send_until, delivery_status, locale)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9, $10, $11, $12)
     ON CONFLICT (workspace_id, email) WHERE status = 'pending'
     DO UPDATE SET token_hash = EXCLUDED.token_hash, role = EXCLUDED.role, expires_at = EXCLUDED.expires_at,
                   locale = COALESCE(EXCLUDED.locale, invitations.locale),
                   invited_by = EXCLUDED.invited_by, invited_by_api_key = EXCLUDED.invited_by_api_key,
                   delivery_status = 'pending', delivery_error = NULL, bounced_at = NULL, bounce_reason = NULL,
                   updated_at = EXCLUDED.updated_at, link_sealed = NULL,
                   send_owner = EXCLUDED.send_owner, send_until = EXCLUDED.send_until
       WHERE $9::uuid IS NULL OR invitations.send_until IS NULL OR invitations.send_until <= $8
     RETURNING ${INVITATION_COLUMNS}, (xmax = 0) AS created`,
    [
      invitation.workspaceId, invitation.email, invitation.role, invitation.tokenHash, invitation.expiresAt,
      invitation.invitedBy, invitation.invitedByApiKey ?? null, invitation.now, lease?.owner ?? null,
      lease?.until ?? null, invitation.deliveryStatus ?? 'pending', invitation.locale ?? null
    ])
  return r.rows[0] ?? null
}

/** Take the send lease of an invitation if it is free or has run out; false while another owner holds it. */
export async function takeSendLease (q: Queryable, id: string, lease: SendLease, now: Date): Promise<boolean> {
  const r = await q.query(
    `UPDATE invitations SET send_owner = $2, send_until = $3
      WHERE id = $1 AND (send_until IS NULL OR send_until <= $4)`, [id, lease.owner, lease.until, now])
  return r.rowCount === 1
}

/** Extend the send leases of invitations while their owner still sends (one, or a batch's chunk). */
export async function renewSendLeases (q: Queryable, ids: string[], owner: string, until: Date): Promise<void> {
  await q.query(
    'UPDATE invitations SET send_until = $3 WHERE id = ANY($1::uuid[]) AND send_owner = $2', [ids, owner, until])
}

/** Give the send leases of invitations back (only their owner can), in one statement. */
export async function releaseSendLeases (q: Queryable, ids: string[], owner: string): Promise<void> {
  await q.query(
    'UPDATE invitations SET send_owner = NULL, send_until = NULL WHERE id = ANY($1::uuid[]) AND send_owner = $2',
    [ids, owner])
}

export async function findInvitation (q: Queryable, workspaceId: string, id: string): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE id = $1 AND workspace_id = $2`, [id, workspaceId]
  )
  return r.rows[0] ?? null
}

export async function findInvitationByTokenHash (
  q: Queryable, tokenHash: string, opts: LockOptions = {}
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE token_hash = $1${lockClause(opts)}`, [tokenHash])
  return r.rows[0] ?? null
}

/**
 * The pending, unexpired invitation of this workspace and e-mail whose token is still the one
 * hashed as `tokenHash` (no later rotation, not accepted or revoked), or null.
 */
export async function findPendingInvitationWithToken (
  q: Queryable, workspaceId: string, email: string, tokenHash: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM invitations
      WHERE workspace_id = $1 AND email = $2 AND token_hash = $3 AND status = 'pending' AND expires_at > $4`,
    [workspaceId, email, tokenHash, now])
  return r.rows[0] ?? null
}

/**
 * The first human open of a pending, unexpired invitation's signup page: records when, once.
 * Null when it was viewed before (or is no longer pending): nothing to record.
 */
export async function markInvitationViewed (
  q: Queryable, id: string, now: Date
): Promise<Pick<InvitationRow, 'id' | 'workspaceId' | 'email' | 'role'> | null> {
  const r = await q.query<Pick<InvitationRow, 'id' | 'workspaceId' | 'email' | 'role'>>(
    `UPDATE invitations SET viewed_at = $2
      WHERE id = $1 AND viewed_at IS NULL AND status = 'pending' AND expires_at > $2
      RETURNING id, workspace_id AS "workspaceId", email, role`, [id, now])
  return r.rows[0] ?? null
}

/** An invitation whose link is handed over without any e-mail (create-admin without a mailer). */
export async function markInvitationNotSent (q: Queryable, id: string): Promise<void> {
  await q.query("UPDATE invitations SET delivery_status = 'not_sent' WHERE id = $1", [id])
}

/** Give a pending, unexpired invitation a fresh token and expiry (re-send). Null if it is not pending now. */
export async function refreshInvitationToken (
  q: Queryable, id: string, tokenHash: string | null, expiresAt: Date, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `UPDATE invitations SET token_hash = $2, expires_at = $3, delivery_status = 'pending', delivery_error = NULL,
                            bounced_at = NULL, bounce_reason = NULL, link_sealed = NULL, updated_at = $4
      WHERE id = $1 AND status = 'pending' AND expires_at > $4 RETURNING ${INVITATION_COLUMNS}`, [
      id, tokenHash, expiresAt, now
    ])
  return r.rows[0] ?? null
}

/**
 * Write the lazy expiry of this workspace + e-mail's pending invitation, if it is past its
 * expiry, so that a new invite makes a new invitation instead of reviving an expired one. The
 * token hash stays, so the old link is still recognised and answered "expired".
 */
export async function expireStalePendingInvitation (
  q: Queryable, workspaceId: string, email: string, now: Date
): Promise<ExpiredInvitation | null> {
  const r = await q.query<ExpiredInvitation>(
    `UPDATE invitations SET status = 'expired', link_sealed = NULL, updated_at = $3
      WHERE workspace_id = $1 AND email = $2 AND status = 'pending' AND expires_at <= $3
      RETURNING id, workspace_id AS "workspaceId", email, role`, [workspaceId, email, now])
  return r.rows[0] ?? null
}

export interface ExpiredInvitation { id: string, workspaceId: string, email: string, role: Role }

/**
 * Marks up to `limit` pending invitations past their expiry as expired (oldest expiry first);
 * SKIP LOCKED lets two instances' sweeps share the work instead of waiting on each other.
 */
export async function expireDueInvitations (q: Queryable, now: Date, limit: number): Promise<ExpiredInvitation[]> {
  const r = await q.query<ExpiredInvitation>(
    `UPDATE invitations SET status = 'expired', link_sealed = NULL, updated_at = $1
      WHERE id IN (SELECT id FROM invitations WHERE status = 'pending' AND expires_at <= $1
                    ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
      RETURNING id, workspace_id AS "workspaceId", email, role`, [now, limit])
  return r.rows
}

/**
 * The outcome of one delivery attempt. `linkSealed`: the token our e-mail carried, sealed
 * (src/invitations/link-seal.ts), kept for the reminder to carry the same link.
 */
export async function recordDelivery (
  q: Queryable,
  id: string,
  delivery: {
    status: DeliveryStatus, error?: string | null, idpInvitationId?: string | null, linkSealed?: string, now: Date
  }
): Promise<void> {
  await q.query(
    `UPDATE invitations SET delivery_status = $2, delivery_error = $3,
            idp_invitation_id = COALESCE($4, idp_invitation_id),
            delivery_attempts = delivery_attempts + 1,
            last_sent_at = CASE WHEN $2 IN ('sent', 'identity_provider') THEN $5 ELSE last_sent_at END,
            link_sealed = COALESCE($6, link_sealed),
            updated_at = $5
      WHERE id = $1`,
    [id, delivery.status, delivery.error ?? null, delivery.idpInvitationId ?? null, delivery.now,
      delivery.linkSealed ?? null])
}

/**
 * Claims up to `limit` pending invitations whose reminder is due in their workspace's setting
 * (reminder_days before expiry; NULL: off): e-mailed by us (and not bounced since) with a link still kept sealed, last
 * sent before the reminder point (an invitation whose whole life is shorter than the window gets
 * none), not reminded yet. `reminded_at IS NULL` in the UPDATE is the once-only guarantee: of
 * concurrent sweeps one claims each row (SKIP LOCKED lets them share the batch).
 */
export async function claimDueReminders (q: Queryable, now: Date, limit: number): Promise<ExpiredInvitation[]> {
  const r = await q.query<ExpiredInvitation>(
    `UPDATE invitations SET reminded_at = $1
      WHERE id IN (SELECT i.id FROM invitations i JOIN workspaces w ON w.id = i.workspace_id
                    WHERE i.status = 'pending' AND i.reminded_at IS NULL AND i.link_sealed IS NOT NULL
                      AND i.delivery_status = 'sent'
                      AND i.expires_at > $1 AND i.expires_at <= $1 + interval '7 days'
                      AND w.reminder_days IS NOT NULL
                      AND i.expires_at <= $1 + make_interval(days => w.reminder_days)
                      AND i.last_sent_at <= i.expires_at - make_interval(days => w.reminder_days)
                    ORDER BY i.expires_at LIMIT $2 FOR UPDATE OF i SKIP LOCKED)
        AND reminded_at IS NULL AND status = 'pending'
      RETURNING id, workspace_id AS "workspaceId", email, role`, [now, limit])
  return r.rows
}

/** What a reminder e-mail needs: the invitation, its sealed link, its workspace's and inviter's names. */
export interface ReminderRow
  extends Pick<InvitationRow, 'id' | 'workspaceId' | 'email' | 'role' | 'status' | 'expiresAt' | 'locale'> {
  tokenHash: string | null
  linkSealed: string | null
  inviterName: string | null
}

export async function findReminder (q: Queryable, id: string): Promise<ReminderRow | null> {
  const r = await q.query<ReminderRow>(
    `SELECT i.id, i.workspace_id AS "workspaceId", i.email, i.role, i.status, i.expires_at AS "expiresAt",
            i.token_hash AS "tokenHash", i.link_sealed AS "linkSealed", i.locale,
            COALESCE(u.name, u.email) AS "inviterName"
       FROM invitations i
       LEFT JOIN users u ON u.id = i.invited_by
      WHERE i.id = $1`, [id])
  return r.rows[0] ?? null
}

/**
 * A permanent delivery failure of a pending invitation's e-mail: `bounced`, with when and why.
 * Only an e-mail we sent can bounce (not the identity provider's, not one that failed at the
 * relay); null when there is none such, or it is bounced already (a DSN repeated: no second event).
 */
export async function markInvitationBounced (
  q: Queryable, id: string, reason: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `UPDATE invitations SET delivery_status = 'bounced', bounced_at = $3, bounce_reason = $2, updated_at = $3
      WHERE id = $1 AND status = 'pending' AND delivery_status IN ('sent', 'pending') RETURNING ${INVITATION_COLUMNS}`,
    [id, reason, now])
  return r.rows[0] ?? null
}

/** A temporary delivery failure (the relay retries): the reason is kept as the last delivery error, nothing else. */
export async function recordDeliveryDelay (
  q: Queryable, id: string, reason: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `UPDATE invitations SET delivery_error = $2, updated_at = $3
      WHERE id = $1 AND status = 'pending' AND delivery_status IN ('sent', 'pending') RETURNING ${INVITATION_COLUMNS}`,
    [id, reason, now])
  return r.rows[0] ?? null
}

/** Pending invitations e-mailed to this address (a provider's bounce may name only the address). */
export async function findEmailedPendingInvitations (q: Queryable, email: string): Promise<Array<{ id: string }>> {
  const r = await q.query<{ id: string }>(
    `SELECT id FROM invitations
      WHERE email = $1 AND status = 'pending' AND delivery_status IN ('sent', 'pending')
      ORDER BY last_sent_at DESC LIMIT 20`, [email])
  return r.rows
}

/** The workspace's pending, unexpired invitation for this address, locked (an SSO sign-in accepts it), or null. */
export async function lockPendingInvitationFor (
  q: Queryable, workspaceId: string, email: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM invitations
      WHERE workspace_id = $1 AND email = $2 AND status = 'pending' AND expires_at > $3 FOR UPDATE`,
    [workspaceId, email, now])
  return r.rows[0] ?? null
}

/** The invitation a delivery report names, locked until the report is applied (its last send read once). */
export async function lockInvitation (q: Queryable, id: string): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(`SELECT ${INVITATION_COLUMNS} FROM invitations WHERE id = $1 FOR UPDATE`, [id])
  return r.rows[0] ?? null
}

/**
 * Mark a pending, unexpired invitation accepted. The WHERE clause is the single-use guarantee:
 * of two concurrent accepts only one updates a row. The token hash is kept, so a second use of
 * the link is recognised and answered 410 TOKEN_USED rather than 400 TOKEN_INVALID.
 */
export async function markInvitationAccepted (q: Queryable, id: string, userId: string, now: Date): Promise<boolean> {
  const r = await q.query(
    `UPDATE invitations SET status = 'accepted', accepted_at = $3, accepted_user_id = $2, link_sealed = NULL,
                            updated_at = $3
      WHERE id = $1 AND status = 'pending' AND expires_at > $3`, [id, userId, now])
  return r.rowCount === 1
}

/** Revoke a pending, unexpired invitation; null when there is none such in this workspace. */
export async function markInvitationRevoked (
  q: Queryable, workspaceId: string, id: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `UPDATE invitations SET status = 'revoked', revoked_at = $3, token_hash = NULL, link_sealed = NULL, updated_at = $3
      WHERE id = $1 AND workspace_id = $2 AND status = 'pending' AND expires_at > $3 RETURNING ${INVITATION_COLUMNS}`, [
      id, workspaceId, now
    ])
  return r.rows[0] ?? null
}

/** Newest first, keyset-paginated on (created_at, id); status filter applies the expiry rule. */
export async function listInvitations (
  q: Queryable,
  filter: {
    workspaceId: string,
    status?: InvitationStatus | undefined,
    now: Date,
    limit: number,
    before?: { createdAt: Date, id: string } | undefined
  }
): Promise<InvitationRow[]> {
  const { text, params } = statusPageQuery(
    { columns: INVITATION_COLUMNS, from: 'invitations', scope: 'workspace_id = $1', scopeParams: [filter.workspaceId] },
    filter
  )
  const r = await q.query<InvitationRow>(text, params)
  return r.rows
}

/** The funnel's counts (GET /api/invitations/funnel; src/invitations/funnel.ts). */
export interface FunnelCounts { sent: number, viewed: number, accepted: number, expiredUnseen: number, bounced: number }

/**
 * Of a workspace's invitations made in [since, until) and handed over (last_sent_at set): how
 * many were viewed, accepted, expired unseen (stored, or pending past expiry at `now`), bounced.
 * One index-only scan of invitations_funnel_idx (migration 020) over the period.
 */
export async function invitationFunnel (
  q: Queryable, f: { workspaceId: string, since: Date, until: Date, now: Date }
): Promise<FunnelCounts> {
  const r = await q.query<FunnelCounts>(
    `SELECT count(*)::int AS sent,
            count(*) FILTER (WHERE viewed_at IS NOT NULL)::int AS viewed,
            count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
            count(*) FILTER (WHERE viewed_at IS NULL
                               AND (status = 'expired' OR (status = 'pending' AND expires_at <= $4)))::int
              AS "expiredUnseen",
            count(*) FILTER (WHERE delivery_status = 'bounced')::int AS bounced
       FROM invitations
      WHERE workspace_id = $1 AND created_at >= $2 AND created_at < $3 AND last_sent_at IS NOT NULL`,
    [f.workspaceId, f.since, f.until, f.now])
  return r.rows[0] as FunnelCounts
}

/** create-admin: the pending admin invitation for this e-mail in a workspace of this name, if any. */
export async function findPendingInvitationByWorkspaceName (
  q: Queryable, workspaceName: string, email: string, now: Date
): Promise<InvitationRow | null> {
  const r = await q.query<InvitationRow>(
    `SELECT ${INVITATION_COLUMNS} FROM invitations WHERE id = (
       SELECT i.id FROM invitations i JOIN workspaces w ON w.id = i.workspace_id
        WHERE w.name = $1 AND i.email = $2 AND i.role = 'admin' AND i.status = 'pending' AND i.expires_at > $3
        ORDER BY i.created_at DESC LIMIT 1)`, [workspaceName, email, now])
  return r.rows[0] ?? null
}

/** Who sent an invitation and through which door, as the API names them (the contract's `Invitation.inviter`). */
interface Inviter {
  /** The audit actor's type: `user`, `api_key`, `system`, `chat_platform`. */
  type: string
  /** A person's name (else their e-mail), a key's name, or what the service acted as. */
  name: string
  /** A person's e-mail; null for a key or the service. */
  email: string | null
  source: string
}

export interface InviterRow {
  invitationId: string
  userId: string | null
  inviter: Inviter
}

/** Actor types that are a person, whose label is their e-mail (src/audit/actor.ts). */
const PEOPLE = "('user', 'chat_platform')"

/**
 * The inviters of invitations, by the invitations' ids or by the members who accepted them (the
 * invitation each accepted last): the actor and door of the invitation.created audit row, with a
 * person's name read from their member row (their e-mail once they are gone).
 *
 * Each invitation looks up its own audit row (LATERAL … LIMIT 1): with statistics, one probe of
 * audit_events_target_idx on workspace, target type and id. A plain join read, with the audit
 * table taken for empty (PGlite never refreshed its statistics: no autovacuum), all of the
 * workspace's invitation rows for each invitation of the page: a list page went from 3 ms to
 * 70 ms after 1,000 invites, and on in proportion. With stale statistics the probe may still walk
 * the workspace's trail newest first (audit_events_workspace_idx) until it meets the invitation's
 * row, which for a list's newest invitations is near; the retention sweep refreshes the
 * statistics of grown tables on PGlite (src/housekeeping/statistics.ts), after which the planner
 * takes the target index (test/invitations/inviters-plan.test.ts).
 */
export async function findInviters (
  q: Queryable, workspaceId: string, by: { invitationIds: string[] } | { acceptedBy: string[] }
): Promise<InviterRow[]> {
  const ids = 'invitationIds' in by ? by.invitationIds : by.acceptedBy
  if (ids.length === 0) return []
  const key = 'invitationIds' in by ? 'i.id' : 'i.accepted_user_id'
  const r = await q.query<{
    invitationId: string,
    userId: string | null,
    type: string,
    label: string | null,
    person: string | null
    source: string
  }>(
    `SELECT DISTINCT ON (${key}) i.id AS "invitationId", i.accepted_user_id AS "userId", a.actor_type AS type,
            a.actor_label AS label, u.name AS person, a.source
       FROM invitations i
      CROSS JOIN LATERAL (
            SELECT e.actor_type, e.actor_id, e.actor_label, e.source FROM audit_events e
             WHERE e.workspace_id = i.workspace_id AND e.target_type = 'invitation' AND e.target_id = i.id::text
               AND e.action = 'invitation.created'
             ORDER BY e.id LIMIT 1) a
       LEFT JOIN users u
         ON u.id = CASE WHEN a.actor_type IN ${PEOPLE} THEN a.actor_id::uuid END AND u.workspace_id = i.workspace_id
      WHERE ${key} = ANY($2::uuid[]) AND i.workspace_id = $1
      ORDER BY ${key}, i.accepted_at DESC`,
    [workspaceId, ids])
  return r.rows.map(row => {
    const person = row.type === 'user' || row.type === 'chat_platform'
    return {
      invitationId: row.invitationId,
      userId: row.userId,
      inviter: {
        type: row.type,
        name: (person ? row.person : null) ?? row.label ?? row.type,
        email: person ? row.label : null,
        source: row.source
      }
    }
  })
}

/** An invitation's sealed reminder link, for re-encryption (src/lib/reseal.ts). */
export interface SealedLink { id: string, values: { linkSealed: string | null } }

/** Invitations holding a sealed link, in id order after `after` (a page of `limit`). */
export async function listSealedLinks (q: Queryable, after: string | null, limit: number): Promise<SealedLink[]> {
  const r = await q.query<{ id: string, linkSealed: string }>(
    `SELECT id, link_sealed AS "linkSealed" FROM invitations
      WHERE link_sealed IS NOT NULL AND id > $1 ORDER BY id LIMIT $2`,
    [after ?? '00000000-0000-0000-0000-000000000000', limit])
  return r.rows.map(({ id, linkSealed }) => ({ id, values: { linkSealed } }))
}

/** Replaces a sealed link if the row still holds `from`; false otherwise. */
export async function resealLink (q: Queryable, id: string, from: string, to: string): Promise<boolean> {
  const r = await q.query('UPDATE invitations SET link_sealed = $3 WHERE id = $1 AND link_sealed = $2', [id, from, to])
  return r.rowCount === 1
}
