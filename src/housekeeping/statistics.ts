import type { Queryable } from '../db/client.js'

// What autovacuum does on PostgreSQL, done by the retention sweep on the embedded database. PGlite
// runs no autovacuum (and its activity counters in pg_stat_user_tables stay at 0), so:
//
// - Planner statistics. A table's statistics were those of the day its data directory was made,
//   however it grew: a plan chosen for an empty audit_events read it whole for each invitation of
//   a list page once it held thousands of rows (findInviters, src/db/invitations.ts). So each of
//   the service's tables that grew by a fifth (and at least GROWTH_PAGES pages) since its
//   statistics were taken is ANALYZEd. One ANALYZE samples at most 30,000 rows (0.1–0.3 s on
//   PGlite for the largest tables) and runs only after such growth.
// - VACUUM. Without it the space of deleted and updated rows is never recorded as free: every new
//   row went at its table's end and the indexes kept every dead entry, so a table whose rows come
//   and go (login tokens, sessions, Idempotency-Keys, the job queue's) grew by all its churn, and
//   nothing ever froze old rows against transaction-id wraparound. A plain VACUUM of the database
//   skips the pages nothing changed on (the visibility map): 25–30 ms at 100,000 invitations when
//   little changed, 170 ms the first time.
//
// The size at which a table was last analyzed is remembered here, not read from pg_class.relpages:
// VACUUM sets relpages too, so after each one a table growing by less than a fifth between two
// sweeps would never have counted as grown. A process starts from relpages (what the last ANALYZE
// or VACUUM left).

/** Pages (8 kB) a table must grow by, besides a fifth of its size, before it is analyzed again. */
const GROWTH_PAGES = 8

/** Each table's size in pages when this process last analyzed it (or first saw it). */
export type AnalyzedPages = Map<string, number>

interface TableSize { name: string, pages: number, relpages: number }

async function tableSizes (q: Queryable): Promise<TableSize[]> {
  const r = await q.query<TableSize>(
    `SELECT c.relname AS name,
            (pg_relation_size(c.oid) / current_setting('block_size')::int)::int AS pages,
            greatest(c.relpages, 0)::int AS relpages
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind = 'r'
      ORDER BY c.relname`)
  return r.rows
}

const grown = (t: TableSize, analyzed: AnalyzedPages): boolean =>
  t.pages >= (analyzed.get(t.name) ?? t.relpages) * 1.2 + GROWTH_PAGES

/** The service's tables (schema public) that grew since their statistics were taken. */
export async function staleTables (q: Queryable, analyzed: AnalyzedPages = new Map()): Promise<string[]> {
  return (await tableSizes(q)).filter(t => grown(t, analyzed)).map(t => t.name)
}

/** ANALYZEs the tables that grew (staleTables) and records their size in `analyzed`; answers their names. */
export async function refreshStatistics (q: Queryable, analyzed: AnalyzedPages = new Map()): Promise<string[]> {
  const names: string[] = []
  for (const t of await tableSizes(q)) {
    if (!grown(t, analyzed)) {
      if (!analyzed.has(t.name)) analyzed.set(t.name, t.relpages)
      continue
    }
    await q.query(`ANALYZE "${t.name.replaceAll('"', '""')}"`)
    analyzed.set(t.name, t.pages)
    names.push(t.name)
  }
  return names
}

/** VACUUMs the whole database (every schema: the job queue's too); answers how long it took, in ms. */
export async function vacuumDatabase (q: Queryable): Promise<number> {
  const started = performance.now()
  await q.query('VACUUM')
  return Math.round(performance.now() - started)
}
