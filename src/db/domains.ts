import type { Queryable } from './client.js'

// A workspace's e-mail domains (join by verified domain) and the one-time join links a person
// at a verified domain is e-mailed. A domain is verified by at most one workspace: the partial
// unique index workspace_domains_one_verified refuses a second (a unique violation).

export type DomainStatus = 'pending' | 'verified' | 'failed'
export type DomainPolicy = 'off' | 'suggest' | 'auto_join'

export interface DomainRow {
  id: string
  workspaceId: string
  domain: string
  status: DomainStatus
  policy: DomainPolicy
  token: string
  checkedAt: Date | null
  checkError: string | null
  verifiedAt: Date | null
  failedAt: Date | null
  createdAt: Date
  updatedAt: Date
}

const COLUMNS = `id, workspace_id AS "workspaceId", domain, status, policy, token, checked_at AS "checkedAt",
  check_error AS "checkError", verified_at AS "verifiedAt", failed_at AS "failedAt", created_at AS "createdAt",
  updated_at AS "updatedAt"`

/** A new pending domain, or null when the workspace has it already. */
export async function insertDomain (q: Queryable, d: {
  workspaceId: string, domain: string, policy: DomainPolicy, token: string, createdBy: string | null, now: Date
}): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `INSERT INTO workspace_domains (workspace_id, domain, policy, token, created_by, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $6)
     ON CONFLICT (workspace_id, domain) DO NOTHING RETURNING ${COLUMNS}`,
    [d.workspaceId, d.domain, d.policy, d.token, d.createdBy, d.now])
  return r.rows[0] ?? null
}

/**
 * How many domains a workspace has, after a transaction lock on the workspace's domain list:
 * two adds at once are counted one after the other.
 */
export async function lockAndCountDomains (q: Queryable, workspaceId: string): Promise<number> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('workspace_domains:' || $1, 0))", [workspaceId])
  const r = await q.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM workspace_domains WHERE workspace_id = $1', [workspaceId])
  return r.rows[0]?.n ?? 0
}

/** Oldest first: the order they were added in. */
export async function listDomains (q: Queryable, workspaceId: string): Promise<DomainRow[]> {
  const r = await q.query<DomainRow>(
    `SELECT ${COLUMNS} FROM workspace_domains WHERE workspace_id = $1 ORDER BY created_at, id`, [workspaceId])
  return r.rows
}

export async function findDomain (
  q: Queryable, workspaceId: string, id: string, opts: { forUpdate?: boolean } = {}
): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `SELECT ${COLUMNS} FROM workspace_domains WHERE workspace_id = $1 AND id = $2` +
      (opts.forUpdate === true ? ' FOR UPDATE' : ''),
    [workspaceId, id])
  return r.rows[0] ?? null
}

/** The workspace that verified `domain`, whatever workspace asks (at most one row). */
export async function findVerifiedDomain (q: Queryable, domain: string): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `SELECT ${COLUMNS} FROM workspace_domains WHERE domain = $1 AND status = 'verified'`, [domain])
  return r.rows[0] ?? null
}

/** The outcome of a look at DNS: verified (may raise a unique violation), still pending, or failed. */
export async function recordDomainCheck (q: Queryable, c: {
  id: string, status: DomainStatus, checkError: string | null, now: Date
}): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `UPDATE workspace_domains
        SET status = $2, check_error = $3, checked_at = $4, updated_at = $4,
            verified_at = CASE WHEN $2 = 'verified' AND status <> 'verified' THEN $4 ELSE verified_at END,
            failed_at = CASE WHEN $2 = 'failed' AND status <> 'failed' THEN $4 ELSE failed_at END
      WHERE id = $1 RETURNING ${COLUMNS}`,
    [c.id, c.status, c.checkError, c.now])
  return r.rows[0] ?? null
}

export async function updateDomainPolicy (
  q: Queryable, id: string, policy: DomainPolicy, now: Date
): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `UPDATE workspace_domains SET policy = $2, updated_at = $3 WHERE id = $1 RETURNING ${COLUMNS}`, [id, policy, now])
  return r.rows[0] ?? null
}

export async function deleteDomain (q: Queryable, workspaceId: string, id: string): Promise<DomainRow | null> {
  const r = await q.query<DomainRow>(
    `DELETE FROM workspace_domains WHERE workspace_id = $1 AND id = $2 RETURNING ${COLUMNS}`, [workspaceId, id])
  return r.rows[0] ?? null
}

/** Pending domains due for a look (not looked at since `checkedBefore`), those looked at longest ago first. */
export async function listDueDomains (
  q: Queryable, opts: { checkedBefore: Date, limit: number }
): Promise<DomainRow[]> {
  const r = await q.query<DomainRow>(
    `SELECT ${COLUMNS} FROM workspace_domains
      WHERE status = 'pending' AND (checked_at IS NULL OR checked_at < $1)
      ORDER BY checked_at NULLS FIRST, id LIMIT $2`,
    [opts.checkedBefore, opts.limit])
  return r.rows
}

export interface JoinTokenUse { domainId: string, email: string }

/**
 * A join link for `email` at a domain, unless the address was sent `max` since `since` (an
 * advisory lock on the address serialises concurrent requests); returns whether it was inserted.
 */
export async function insertJoinTokenWithinLimit (q: Queryable, t: {
  tokenHash: string,
  domainId: string,
  email: string,
  /** The hash of the asking browser's secret (migration 038), or null. */
  browserHash: string | null,
  expiresAt: Date,
  now: Date,
  since: Date,
  max: number
}): Promise<boolean> {
  await q.query("SELECT pg_advisory_xact_lock(hashtextextended('domain_join_tokens:' || $1, 0))", [t.email])
  const r = await q.query(
    `INSERT INTO domain_join_tokens (token_hash, domain_id, email, expires_at, created_at, browser_hash)
     SELECT $1, $2, $3, $4, $5, $8
      WHERE (SELECT count(*) FROM domain_join_tokens WHERE email = $3 AND created_at > $6) < $7`,
    [t.tokenHash, t.domainId, t.email, t.expiresAt, t.now, t.since, t.max, t.browserHash])
  return r.rowCount === 1
}

export interface JoinTokenRow extends JoinTokenUse { expiresAt: Date, usedAt: Date | null, browserHash: string | null }

export async function findJoinToken (q: Queryable, tokenHash: string): Promise<JoinTokenRow | null> {
  const r = await q.query<JoinTokenRow>(
    `SELECT domain_id AS "domainId", email, expires_at AS "expiresAt", used_at AS "usedAt",
            browser_hash AS "browserHash"
       FROM domain_join_tokens WHERE token_hash = $1`, [tokenHash])
  return r.rows[0] ?? null
}

/** Use a join token once: of two concurrent uses one gets the row. */
export async function consumeJoinToken (q: Queryable, tokenHash: string, now: Date): Promise<JoinTokenUse | null> {
  const r = await q.query<JoinTokenUse>(
    `UPDATE domain_join_tokens SET used_at = $2
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2
      RETURNING domain_id AS "domainId", email`, [tokenHash, now])
  return r.rows[0] ?? null
}

/** Join tokens past their expiry (used or not) are of no further use. */
export async function deleteExpiredJoinTokens (q: Queryable, now: Date): Promise<number> {
  const r = await q.query('DELETE FROM domain_join_tokens WHERE expires_at <= $1', [now])
  return r.rowCount ?? 0
}

export interface JoinableDomain {
  id: string, workspaceId: string, workspaceName: string, domain: string, policy: 'suggest' | 'auto_join'
}

/** A domain people may join through now: verified, its policy not `off`; with its workspace's name. */
export async function findJoinableDomain (
  q: Queryable, by: { id: string } | { domain: string }
): Promise<JoinableDomain | null> {
  const [where, value] = 'id' in by ? ['d.id = $1', by.id] : ['d.domain = $1', by.domain]
  const r = await q.query<JoinableDomain>(
    `SELECT d.id, d.workspace_id AS "workspaceId", w.name AS "workspaceName", d.domain, d.policy
       FROM workspace_domains d JOIN workspaces w ON w.id = d.workspace_id
      WHERE ${where} AND d.status = 'verified' AND d.policy <> 'off'`, [value])
  return r.rows[0] ?? null
}

/**
 * Migration 036's step: every domain not failed already whose name `isSuffix` says is a public
 * suffix is failed, the reason as its check error. Returns how many.
 */
export async function failPublicSuffixDomains (
  q: Queryable, isSuffix: (domain: string) => boolean, reason: (domain: string) => string
): Promise<number> {
  const all = await q.query<{ id: string, domain: string }>(
    "SELECT id, domain FROM workspace_domains WHERE status <> 'failed'")
  const hit = all.rows.filter(r => isSuffix(r.domain))
  if (hit.length === 0) return 0
  await q.query(
    `UPDATE workspace_domains d SET status = 'failed', check_error = s.reason, failed_at = now(), updated_at = now()
       FROM unnest($1::uuid[], $2::text[]) AS s(id, reason) WHERE d.id = s.id`,
    [hit.map(r => r.id), hit.map(r => reason(r.domain))])
  return hit.length
}
