import type { Queryable } from '../db/client.js'

// The planner's statistics on the embedded database. PostgreSQL keeps them current by itself:
// autovacuum ANALYZEs a table once enough of it changed. PGlite runs no autovacuum (and its
// activity counters in pg_stat_user_tables stay at 0), so a table's statistics were those of the
// day its data directory was made, however it grew: a plan chosen for an empty audit_events read
// it whole for each invitation of a list page once it held thousands of rows (findInviters,
// src/db/invitations.ts). So the retention sweep, on PGlite, ANALYZEs each of the service's tables
// whose size grew by a fifth (and at least GROWTH_PAGES pages) since its statistics were taken —
// its pages on disk against pg_class.relpages, which ANALYZE sets. One ANALYZE samples at most
// 30,000 rows (0.1–0.3 s on PGlite for the largest tables) and runs only after such growth.

/** Pages (8 kB) a table must grow by, besides a fifth of its size, before it is analyzed again. */
const GROWTH_PAGES = 8

/** The service's tables (schema public) that grew since their statistics were taken. */
export async function staleTables (q: Queryable): Promise<string[]> {
  const r = await q.query<{ name: string }>(
    `SELECT c.relname AS name
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r'
        AND pg_relation_size(c.oid) / current_setting('block_size')::int
            >= c.relpages * 1.2 + $1
      ORDER BY c.relname`, [GROWTH_PAGES])
  return r.rows.map(row => row.name)
}

/** ANALYZEs the tables that grew (staleTables); answers their names. */
export async function refreshStatistics (q: Queryable): Promise<string[]> {
  const names = await staleTables(q)
  for (const name of names) await q.query(`ANALYZE "${name.replaceAll('"', '""')}"`)
  return names
}
