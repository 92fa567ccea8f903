import type { Queryable } from '../src/db/client.js'

// Set-based seeding (INSERT … SELECT generate_series: one statement per table, no round trip per
// row) of rows as the service writes them, for `npm run bench -- --scale` (bench/scale.ts) and
// test/contract/query-plans.test.ts. Every row passes the schema's constraints and reads as the app's own:
// tokens are stored as SHA-256 hex, invitations have the status their age gives them under the
// 7-day expiry (pending only while unexpired: the sweep keeps up), revoked ones lost their token,
// e-mails are lower-case and unique where the schema says so. Row k is k steps older than row 0,
// so seeding k in [from, to) after [0, from) adds older history under the newest rows.

const HOUR = "interval '1 hour'"

/** A random token's stored form: SHA-256 hex of 16 random bytes (as hashToken writes it). */
const TOKEN_HASH = "encode(sha256(uuid_send(gen_random_uuid())), 'hex')"

/**
 * `count` workspaces (named "Seed workspace i", one hour apart) with one active admin each;
 * answers their ids.
 */
export async function seedWorkspaces (q: Queryable, opts: { count: number, now: Date }): Promise<string[]> {
  const r = await q.query<{ id: string }>(
    `WITH ws AS (
       INSERT INTO workspaces (name, created_at)
       SELECT 'Seed workspace ' || i, $2::timestamptz - i * ${HOUR} FROM generate_series(1, $1::int) AS i
       RETURNING id, created_at)
     INSERT INTO users (workspace_id, email, name, role, created_at, updated_at)
     SELECT id, 'admin@' || id || '.seed.test', 'Seed Admin', 'admin', created_at, created_at FROM ws
     RETURNING workspace_id AS id`,
    [opts.count, opts.now])
  return r.rows.map(row => row.id)
}

/**
 * `count` members of each workspace, one hour apart, oldest last: 2 % suspended, 3 % removed (they
 * stay for the audit trail), the rest active; e-mails m{k}@{workspace id}.seed.test.
 */
export async function seedMembers (
  q: Queryable, opts: { workspaceIds: readonly string[], count: number, now: Date }
): Promise<void> {
  await q.query(
    `INSERT INTO users (workspace_id, email, name, role, status, suspended_at, created_at, updated_at)
     SELECT w, 'm' || k || '@' || w || '.seed.test', 'Member ' || k, 'member',
            CASE WHEN k % 50 = 7 THEN 'suspended' WHEN k % 100 IN (3, 13, 23) THEN 'removed' ELSE 'active' END,
            CASE WHEN k % 50 = 7 THEN $3::timestamptz - (k + 1) * ${HOUR} END,
            $3::timestamptz - (k + 1) * ${HOUR}, $3::timestamptz - (k + 1) * ${HOUR}
       FROM unnest($1::uuid[]) AS w CROSS JOIN generate_series(0, $2::int - 1) AS k`,
    [opts.workspaceIds, opts.count, opts.now])
}

/** The first active user of each workspace of `ids` with `role` (its admin when it has no such user). */
const ACTOR = (role: 'admin' | 'member'): string => `
  (SELECT DISTINCT ON (workspace_id) workspace_id, id AS actor FROM users
    WHERE workspace_id = ANY($1::uuid[]) AND status = 'active'
    ORDER BY workspace_id, role = '${role}' DESC, created_at) AS w`

/** Rows k in [from, to) of each workspace, `stepSeconds` apart, k = 0 the newest (at `now`). */
export interface SeedRange {
  workspaceIds: readonly string[]
  from: number
  to: number
  now: Date
  stepSeconds?: number
}

/**
 * Rows a seeding statement writes at most. 100k in one statement took over the service's 5 s
 * statement limit on a busy machine's PostgreSQL, and the seeds run on the service's database
 * options (bench/seed.ts, the hand-written server).
 */
const STATEMENT_ROWS = 10_000

/**
 * Runs a seeding statement whose parameters $1–$5 are a SeedRange's, over [from, to) in pieces of
 * at most STATEMENT_ROWS rows (k values × workspaces); the rows are the same as in one statement.
 */
async function seedRange (q: Queryable, sql: string, r: SeedRange, defaultStep: number): Promise<void> {
  const perStatement = Math.max(1, Math.floor(STATEMENT_ROWS / Math.max(1, r.workspaceIds.length)))
  for (let from = r.from; from < r.to; from += perStatement) {
    const to = Math.min(r.to, from + perStatement)
    await q.query(sql, [r.workspaceIds, from, to, r.now, r.stepSeconds ?? defaultStep])
  }
}

/**
 * Row k of [$2, $3) of each workspace w: its time c.at ($4 − k × $5 seconds), c.done (a minute
 * later, not after $4) and s.status, `young` while within the 7-day expiry and `old` after.
 */
const AGED = (young: string, old: string): string => `
      CROSS JOIN generate_series($2::int, $3::int - 1) AS k
      CROSS JOIN LATERAL (SELECT $4::timestamptz - k * $5::int * interval '1 second' AS at) AS a
      CROSS JOIN LATERAL (SELECT a.at, LEAST(a.at + interval '1 minute', $4::timestamptz) AS done) AS c
      CROSS JOIN LATERAL (SELECT CASE WHEN c.at > $4::timestamptz - interval '7 days' THEN ${young} ELSE ${old} END
                            AS status) AS s`

/**
 * Invitations k in [from, to) of each workspace in `workspaceIds`, invited by its first active
 * admin, `stepSeconds` apart (k = 0 is the newest, at `now`), as the service leaves them: within
 * the 7-day expiry half are pending, the others accepted or revoked; older ones are accepted (6 in
 * 10), revoked (1 in 10) or expired (3 in 10). E-mails s{k}@seed.test, one in 20 an admin invite.
 */
export async function seedInvitations (q: Queryable, range: SeedRange): Promise<void> {
  await seedRange(q,
    `INSERT INTO invitations (workspace_id, email, role, status, token_hash, expires_at, invited_by, delivery_status,
                              delivery_attempts, last_sent_at, accepted_at, revoked_at, viewed_at, created_at,
                              updated_at)
     SELECT w.workspace_id, 's' || k || '@seed.test', CASE WHEN k % 20 = 0 THEN 'admin' ELSE 'member' END,
            s.status, CASE WHEN s.status = 'revoked' THEN NULL ELSE ${TOKEN_HASH} END,
            c.at + interval '7 days', w.actor, 'sent', 1, c.at,
            CASE WHEN s.status = 'accepted' THEN c.done END, CASE WHEN s.status = 'revoked' THEN c.done END,
            CASE WHEN s.status = 'accepted' OR k % 10 = 9 THEN c.at END, c.at,
            CASE WHEN s.status = 'expired' THEN c.at + interval '7 days' WHEN s.status = 'pending' THEN c.at
                 ELSE c.done END
       FROM ${ACTOR('admin')}${AGED(
         "CASE WHEN k % 10 < 5 THEN 'pending' WHEN k % 10 < 9 THEN 'accepted' ELSE 'revoked' END",
         "CASE WHEN k % 10 < 6 THEN 'accepted' WHEN k % 10 < 7 THEN 'revoked' ELSE 'expired' END")}`,
    range, 30)
}

/**
 * Invite requests k in [from, to) of each workspace, by one of its members, `stepSeconds` apart:
 * within the 7-day expiry a third are pending; the rest approved, denied or (old) expired.
 */
export async function seedInviteRequests (q: Queryable, range: SeedRange): Promise<void> {
  await seedRange(q,
    `INSERT INTO invite_requests (workspace_id, email, role, status, requested_by, decided_by, decided_at, expires_at,
                                  created_at, updated_at)
     SELECT w.workspace_id, 'r' || k || '@seed.test', 'member', s.status, w.actor,
            CASE WHEN s.status IN ('approved', 'denied') THEN w.actor END,
            CASE WHEN s.status IN ('approved', 'denied') THEN c.at END,
            c.at + interval '7 days', c.at, c.at
       FROM ${ACTOR('member')}${AGED(
         "CASE WHEN k % 3 = 0 THEN 'pending' WHEN k % 3 = 1 THEN 'approved' ELSE 'denied' END",
         "CASE WHEN k % 3 = 0 THEN 'expired' WHEN k % 3 = 1 THEN 'approved' ELSE 'denied' END")}`,
    range, 3600)
}

/** `perWorkspace` API keys of each workspace, made by its admin a day apart; all but the newest 3 revoked. */
export async function seedApiKeys (
  q: Queryable, opts: { workspaceIds: readonly string[], perWorkspace: number, now: Date }
): Promise<void> {
  await q.query(
    `INSERT INTO api_keys (workspace_id, created_by, name, prefix, secret_hash, created_at, last_used_at, revoked_at,
                           scopes)
     SELECT w.workspace_id, w.actor, 'Key ' || k, 'wsk_' || substr(md5(w.workspace_id::text || k), 1, 12),
            ${TOKEN_HASH}, $3::timestamptz - k * interval '1 day', NULL,
            CASE WHEN k >= 3 THEN $3::timestamptz - (k - 1) * interval '1 day' END,
            ARRAY['invitations:read', 'invitations:write']
       FROM ${ACTOR('admin')}
      CROSS JOIN generate_series(0, $2::int - 1) AS k`,
    [opts.workspaceIds, opts.perWorkspace, opts.now])
}

/**
 * Audit events k in [from, to) of each workspace, `stepSeconds` apart, in id order of time (as
 * written): invitations made by its admin, each an event of the catalogue but one in five (a
 * login, which is not).
 */
export async function seedAuditEvents (q: Queryable, range: SeedRange): Promise<void> {
  await seedRange(q,
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source)
     SELECT uuid_v7_at(c.at), w.workspace_id, e.action, 'user', w.actor::text, 'Seed Admin', e.target_type,
            gen_random_uuid()::text,
            CASE WHEN e.action = 'session.login' THEN jsonb_build_object('method', 'login_link')
                 ELSE jsonb_build_object('email', 's' || k || '@seed.test', 'role', 'member') END, c.at,
            CASE WHEN e.action = 'invitation.created' THEN 'invitation.created' END,
            CASE WHEN e.action = 'session.login' THEN 'web' ELSE 'api' END
       FROM ${ACTOR('admin')}
      CROSS JOIN generate_series($3::int - 1, $2::int, -1) AS k
      CROSS JOIN LATERAL (SELECT $4::timestamptz - k * $5::int * interval '1 second' AS at) AS c
      CROSS JOIN LATERAL (SELECT CASE WHEN k % 5 = 4 THEN 'session.login' ELSE 'invitation.created' END AS action,
                                 CASE WHEN k % 5 = 4 THEN 'session' ELSE 'invitation' END AS target_type) AS e
      ORDER BY k DESC`,
    range, 600)
}

/**
 * `perWorkspace` webhook endpoints of each workspace (every event type), and for the first
 * `withDeliveries` of them, one delivery per event of the workspace: succeeded, but the newest
 * pending and one in 50 failed.
 */
export async function seedWebhooks (
  q: Queryable, opts: { workspaceIds: readonly string[], perWorkspace: number, withDeliveries: number, now: Date }
): Promise<void> {
  await q.query(
    `INSERT INTO webhook_endpoints (workspace_id, url, description, secret_enc, created_by, created_at, updated_at)
     SELECT w.workspace_id, 'https://hooks.seed.test/' || k, 'Endpoint ' || k,
            encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), w.actor,
            $3::timestamptz - k * interval '1 day', $3::timestamptz - k * interval '1 day'
       FROM ${ACTOR('admin')}
      CROSS JOIN generate_series(1, $2::int) AS k`,
    [opts.workspaceIds, opts.perWorkspace, opts.now])
  await q.query(
    `INSERT INTO webhook_deliveries (endpoint_id, workspace_id, event_id, event_type, status, attempts,
                                     last_status_code, next_attempt_at, delivered_at, created_at, updated_at)
     SELECT p.id, p.workspace_id, e.id, e.event_type, s.status, CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
            CASE s.status WHEN 'succeeded' THEN 204 WHEN 'failed' THEN 500 END,
            CASE WHEN s.status = 'pending' THEN e.created_at END,
            CASE WHEN s.status = 'succeeded' THEN e.created_at END, e.created_at, e.created_at
       FROM webhook_endpoints p
       JOIN audit_events e ON e.workspace_id = p.workspace_id AND e.event_type IS NOT NULL
      CROSS JOIN LATERAL (SELECT CASE WHEN e.created_at > $2::timestamptz - interval '1 minute' THEN 'pending'
                                      WHEN get_byte(uuid_send(e.id), 15) % 50 = 0 THEN 'failed'
                                      ELSE 'succeeded' END AS status) AS s
      WHERE p.workspace_id = ANY($1::uuid[]) AND substr(p.url, 25)::int <= $3`,
    [opts.workspaceIds, opts.now, opts.withDeliveries])
}
