import type { Queryable } from './client.js'

// The retention sweep's one shape of delete (src/housekeeping/retention.ts): a short statement
// that takes at most `limit` rows, so that no sweep holds a table's locks for long; the sweep
// calls it again until it comes back short.

/** Rows of `table` named by their `key` (its columns: `id`, `workspace_id, key`), those `where` selects over $1. */
interface Prunable { table: string, key: string, where: string }

/** Deletes up to `limit` of the rows `rows.where` selects with $1 = `before`; answers how many. */
export async function deleteBatch (q: Queryable, rows: Prunable, before: Date, limit: number): Promise<number> {
  const r = await q.query(
    `DELETE FROM ${rows.table} WHERE (${rows.key}) IN (
       SELECT ${rows.key} FROM ${rows.table} WHERE ${rows.where} LIMIT $2)`, [before, limit])
  return r.rowCount
}
