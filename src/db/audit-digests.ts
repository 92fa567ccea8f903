import type { Queryable } from './client.js'
import { replaceSealed, type SealedRow } from './sealed-values.js'

// The audit trail's signing keys and signed hourly digests (migration 057; src/audit/digests.ts).

export interface SigningKeyRow {
  kid: string
  /** The raw Ed25519 public key, base64url (a JWK's `x`). */
  publicKey: string
  createdAt: Date
  retiredAt: Date | null
}

const KEY_COLUMNS = 'kid, public_key AS "publicKey", created_at AS "createdAt", retired_at AS "retiredAt"'

export async function insertSigningKey (
  q: Queryable, key: { kid: string, publicKey: string, privateKeyEnc: string, now: Date }
): Promise<void> {
  await q.query(
    'INSERT INTO audit_signing_keys (kid, public_key, private_key_enc, created_at) VALUES ($1, $2, $3, $4)',
    [key.kid, key.publicKey, key.privateKeyEnc, key.now])
}

/** Every key, newest first: the published list (retired keys included). */
export async function listSigningKeys (q: Queryable): Promise<SigningKeyRow[]> {
  const r = await q.query<SigningKeyRow>(`SELECT ${KEY_COLUMNS} FROM audit_signing_keys ORDER BY created_at DESC, kid`)
  return r.rows
}

/** The key that signs now (the newest not retired), with its sealed private key; null: none yet. */
export async function findSigningKey (q: Queryable): Promise<(SigningKeyRow & { privateKeyEnc: string }) | null> {
  const r = await q.query<SigningKeyRow & { privateKeyEnc: string }>(
    `SELECT ${KEY_COLUMNS}, private_key_enc AS "privateKeyEnc" FROM audit_signing_keys
      WHERE retired_at IS NULL ORDER BY created_at DESC, kid DESC LIMIT 1`)
  return r.rows[0] ?? null
}

/** Retires every key but `kid`. */
export async function retireSigningKeysBut (q: Queryable, kid: string, now: Date): Promise<void> {
  await q.query('UPDATE audit_signing_keys SET retired_at = $2 WHERE kid <> $1 AND retired_at IS NULL', [kid, now])
}

export type SealedSigningKey = SealedRow<string, 'privateKeyEnc'>

export async function listSealedSigningKeys (
  q: Queryable, after: string | null, limit: number
): Promise<SealedSigningKey[]> {
  const r = await q.query<{ id: string, privateKeyEnc: string }>(
    `SELECT kid AS id, private_key_enc AS "privateKeyEnc" FROM audit_signing_keys
      WHERE kid > $1 ORDER BY kid LIMIT $2`, [after ?? '', limit])
  return r.rows.map(({ id, ...values }) => ({ id, values }))
}

export async function resealSigningKey (q: Queryable, kid: string, from: string, to: string): Promise<boolean> {
  return await replaceSealed(q, { table: 'audit_signing_keys', key: 'kid', id: [kid] }, 'private_key_enc', from, to)
}

/** A segment of a workspace's chain: what a digest covers. */
export interface ChainSegment {
  workspaceId: string
  firstSequence: number
  lastSequence: number
  firstId: string
  lastId: string
  count: number
  lastHash: string
  /** The digest before (null: the workspace's first). */
  previousDigestHash: string | null
}

/**
 * Per workspace, the part of the chain no digest covers yet up to the last record created before
 * `end`: from the record after the last digest's to that one. Workspaces with nothing new: none.
 */
export async function listUndigestedSegments (q: Queryable, end: Date): Promise<ChainSegment[]> {
  const r = await q.query<ChainSegment>(
    `WITH last AS (
       SELECT DISTINCT ON (workspace_id) workspace_id, last_seq, digest_hash FROM audit_digests
        ORDER BY workspace_id, hour DESC
     ), upto AS (
       SELECT e.workspace_id, max(e.chain_seq) AS seq FROM audit_events e
         LEFT JOIN last l ON l.workspace_id = e.workspace_id
        WHERE e.chain_seq IS NOT NULL AND e.created_at < $1 AND e.chain_seq > coalesce(l.last_seq, 0)
        GROUP BY e.workspace_id
     )
     SELECT u.workspace_id::text AS "workspaceId", min(e.chain_seq)::float8 AS "firstSequence",
            u.seq::float8 AS "lastSequence",
            (array_agg(e.id::text ORDER BY e.chain_seq))[1] AS "firstId",
            (array_agg(e.id::text ORDER BY e.chain_seq DESC))[1] AS "lastId",
            count(*)::int AS count,
            (array_agg(e.hash ORDER BY e.chain_seq DESC))[1] AS "lastHash",
            l.digest_hash AS "previousDigestHash"
       FROM upto u
       JOIN audit_events e ON e.workspace_id = u.workspace_id AND e.chain_seq <= u.seq
        AND e.chain_seq > coalesce((SELECT l2.last_seq FROM last l2 WHERE l2.workspace_id = u.workspace_id), 0)
       LEFT JOIN last l ON l.workspace_id = u.workspace_id
      GROUP BY u.workspace_id, u.seq, l.digest_hash`, [end])
  return r.rows
}

export interface DigestRow extends ChainSegment {
  hour: Date
  digestHash: string
  kid: string
  signature: string
}

/** Stores a digest; false when the hour of that workspace is signed already (another instance). */
export async function insertDigest (q: Queryable, d: DigestRow, now: Date): Promise<boolean> {
  const r = await q.query(
    `INSERT INTO audit_digests (workspace_id, hour, first_seq, last_seq, first_id, last_id, record_count, last_hash,
                                previous_digest_hash, digest_hash, kid, signature, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
    [d.workspaceId, d.hour, d.firstSequence, d.lastSequence, d.firstId, d.lastId, d.count, d.lastHash,
      d.previousDigestHash, d.digestHash, d.kid, d.signature, now])
  return r.rowCount === 1
}

/** A workspace's digests oldest first, hours in [since, until), after the hour `after`. */
export async function listDigests (
  q: Queryable, f: { workspaceId: string, since: Date | null, until: Date | null, after: Date | null, limit: number }
): Promise<DigestRow[]> {
  const r = await q.query<DigestRow>(
    `SELECT workspace_id::text AS "workspaceId", hour, first_seq::float8 AS "firstSequence",
            last_seq::float8 AS "lastSequence", first_id::text AS "firstId", last_id::text AS "lastId",
            record_count AS count, last_hash AS "lastHash", previous_digest_hash AS "previousDigestHash",
            digest_hash AS "digestHash", kid, signature
       FROM audit_digests
      WHERE workspace_id = $1 AND ($2::timestamptz IS NULL OR hour >= $2) AND ($3::timestamptz IS NULL OR hour < $3)
        AND ($4::timestamptz IS NULL OR hour > $4)
      ORDER BY hour LIMIT $5`, [f.workspaceId, f.since, f.until, f.after, f.limit])
  return r.rows
}
