import type { Queryable } from './client.js'

// How each admin hears of new invite requests (issue 43): their channel, when they were last told,
// when the digest of what arrived since is due, and which request each admin was told of (once).

export type NoticeChannel = 'email' | 'slack' | 'off'

export interface AdminNoticeState {
  userId: string
  channel: NoticeChannel
  lastNoticeAt: Date | null
  digestDueAt: Date | null
}

/**
 * The channel an admin hears through, over `admin_notice_settings` as `s` (or a row of nulls):
 * what they chose, but Slack only while their workspace has Slack installed — e-mail otherwise,
 * and e-mail too while they never chose (NULL) in a workspace without Slack. A notice never goes
 * to a Slack that is not there.
 */
function channelSql (userId: string, chosen: string): string {
  return `CASE WHEN ${chosen} = 'off' THEN 'off'
               WHEN ${chosen} = 'email' THEN 'email'
               WHEN EXISTS (SELECT 1 FROM users u
                              JOIN chat_installations c ON c.workspace_id = u.workspace_id AND c.active
                             WHERE u.id = ${userId}) THEN 'slack'
               ELSE 'email' END`
}

const STATE = `user_id AS "userId", ${channelSql('s.user_id', 's.invite_requests')} AS channel,
  last_notice_at AS "lastNoticeAt", digest_due_at AS "digestDueAt"`

/** The channel the admin hears through (channelSql): their choice, or Slack where installed, else e-mail. */
export async function findNoticeChannel (q: Queryable, userId: string): Promise<NoticeChannel> {
  const chosen = '(SELECT invite_requests FROM admin_notice_settings WHERE user_id = $1)'
  const r = await q.query<{ channel: NoticeChannel }>(`SELECT ${channelSql('$1::uuid', chosen)} AS channel`, [userId])
  return r.rows[0]?.channel ?? 'email'
}

export async function setNoticeChannel (q: Queryable, userId: string, channel: NoticeChannel): Promise<void> {
  await q.query(
    `INSERT INTO admin_notice_settings (user_id, invite_requests) VALUES ($1, $2)
     ON CONFLICT (user_id) DO UPDATE SET invite_requests = EXCLUDED.invite_requests`,
    [userId, channel])
}

/**
 * The notice state of these admins, locked until the transaction ends (rows made first where
 * missing), in id order so that two requests arriving at once lock them in the same order.
 */
export async function lockNoticeStates (q: Queryable, userIds: string[]): Promise<AdminNoticeState[]> {
  if (userIds.length === 0) return []
  await q.query(
    `INSERT INTO admin_notice_settings (user_id) SELECT unnest($1::uuid[])
     ON CONFLICT (user_id) DO NOTHING`, [userIds])
  const r = await q.query<AdminNoticeState>(
    `SELECT ${STATE} FROM admin_notice_settings s WHERE user_id = ANY($1::uuid[]) ORDER BY user_id FOR UPDATE`,
    [userIds])
  return r.rows
}

/** Records that the admin is told of the request (now, or in the digest); false when already recorded. */
export async function recordRequestNotice (
  q: Queryable,
  n: { userId: string, requestId: string, immediate: boolean, now: Date }
): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO admin_request_notices (user_id, request_id, immediate, told_at)
     VALUES ($1, $2, $3, CASE WHEN $3 THEN $4::timestamptz END)
     ON CONFLICT (user_id, request_id) DO NOTHING RETURNING user_id`,
    [n.userId, n.requestId, n.immediate, n.now])
  return r.rows.length > 0
}

export async function markNoticeSent (q: Queryable, userId: string, now: Date): Promise<void> {
  await q.query('UPDATE admin_notice_settings SET last_notice_at = $2 WHERE user_id = $1', [userId, now])
}

export async function holdForDigest (q: Queryable, userId: string, dueAt: Date): Promise<void> {
  await q.query(
    'UPDATE admin_notice_settings SET digest_due_at = COALESCE(digest_due_at, $2) WHERE user_id = $1',
    [userId, dueAt])
}

/** The admins told of this request at once in Slack (the request's own message, with its buttons). */
export async function listToldInSlackAtOnce (q: Queryable, requestId: string): Promise<string[]> {
  const r = await q.query<{ userId: string }>(
    `SELECT n.user_id AS "userId" FROM admin_request_notices n
       JOIN admin_notice_settings s ON s.user_id = n.user_id
      WHERE n.request_id = $1 AND n.immediate AND ${channelSql('s.user_id', 's.invite_requests')} = 'slack'`,
    [requestId])
  return r.rows.map(row => row.userId)
}

/** A digest claimed: the admin, their workspace, and the requests it tells of. */
export interface ClaimedDigest { userId: string, workspaceId: string, requestIds: string[] }

/**
 * Claims the digests due by `now`, at most `limit`: each one's held requests are marked told and
 * its admin's hour starts again. Of any number of sweeps at once, one claims each digest.
 */
export async function claimDueDigests (q: Queryable, now: Date, limit: number): Promise<ClaimedDigest[]> {
  const r = await q.query<ClaimedDigest>(
    `WITH due AS (
       UPDATE admin_notice_settings SET digest_due_at = NULL, last_notice_at = $1
        WHERE user_id IN (SELECT user_id FROM admin_notice_settings
                           WHERE digest_due_at <= $1 ORDER BY digest_due_at LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING user_id
     ), told AS (
       UPDATE admin_request_notices n SET told_at = $1 FROM due
        WHERE n.user_id = due.user_id AND n.told_at IS NULL
       RETURNING n.user_id, n.request_id
     )
     SELECT due.user_id AS "userId", u.workspace_id AS "workspaceId",
            COALESCE(array_agg(told.request_id::text) FILTER (WHERE told.request_id IS NOT NULL), '{}'::text[])
              AS "requestIds"
       FROM due JOIN users u ON u.id = due.user_id LEFT JOIN told ON told.user_id = due.user_id
      GROUP BY due.user_id, u.workspace_id`,
    [now, limit])
  return r.rows
}
