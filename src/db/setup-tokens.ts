import type { Queryable } from './client.js'

export async function insertSetupToken (q: Queryable, tokenHash: string, now: Date): Promise<void> {
  await q.query('INSERT INTO setup_tokens (token_hash, created_at) VALUES ($1, $2)', [tokenHash, now])
}

/**
 * Deletes every setup token and returns their hashes. In a transaction the rows stay locked until
 * it ends: a concurrent caller waits, then finds none (so only one setup can ever succeed).
 */
export async function takeSetupTokens (q: Queryable): Promise<string[]> {
  const r = await q.query<{ tokenHash: string }>('DELETE FROM setup_tokens RETURNING token_hash AS "tokenHash"')
  return r.rows.map(row => row.tokenHash)
}
