import type { Queryable } from './client.js'

// Columns holding sealed values (src/lib/crypto.ts) as re-encryption reads and rewrites them
// (src/lib/reseal.ts, npm run secrets:reencrypt): each store lists its rows, page by page, as
// SealedRow, and writes a value back through replaceSealed.

/** A row's sealed values by column (null: nothing sealed there), under the id that names the row. */
export interface SealedRow<Id, Column extends string> { id: Id, values: Record<Column, string | null> }

/**
 * Replaces the sealed value in `column` of the row whose `key` columns equal `id`, if it still
 * holds `from` (the service may have sealed a new one meanwhile); false otherwise.
 */
export async function replaceSealed (
  q: Queryable, row: { table: string, key: string, id: readonly string[] }, column: string, from: string, to: string
): Promise<boolean> {
  const n = row.id.length
  const id = row.id.map((_, i) => `$${i + 1}`).join(', ')
  const r = await q.query(
    `UPDATE ${row.table} SET ${column} = $${n + 2} WHERE (${row.key}) = (${id}) AND ${column} = $${n + 1}`,
    [...row.id, from, to])
  return r.rowCount === 1
}
