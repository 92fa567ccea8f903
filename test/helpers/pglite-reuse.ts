import type { Database } from '../../src/db/client.js'

// An embedded test database costs 0.64 CPU-s to open (the template's 26 MB unpacked into
// PGlite's in-memory file system, then PostgreSQL started): a test file building five apps paid
// 3 of its 12 CPU-s for them. One given back when its test ends is emptied (TRUNCATE) and handed to
// the next test of the same process instead, once its catalog is shown to be the template's: the
// same relations, columns, defaults, constraints, functions, schemas and roles, no planner
// statistics, no open transaction. Its tables are then emptied and the template's few rows put
// back. Anything else (a closed database, a test's DDL, an ANALYZE, a failed reset) closes it,
// and the next test gets a new one.

/** The catalog as one digest: equal to the template's, or not reusable. */
const SHAPE = `
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS shape FROM (
  SELECT 'rel ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' ' || coalesce((
    SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text
      || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), ''), ', ' ORDER BY a.attnum)
    FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped), '') AS x
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'
  UNION ALL SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
  UNION ALL SELECT 'fn ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc)
    FROM pg_proc p WHERE p.pronamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace)
  UNION ALL SELECT 'trg ' || tgrelid::regclass::text || ' ' || tgname FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'type ' || t.oid::regtype::text FROM pg_type t
    WHERE t.typnamespace NOT IN ('pg_catalog'::regnamespace, 'information_schema'::regnamespace) AND t.typrelid = 0
  UNION ALL SELECT 'enum ' || enumtypid::regtype::text || ' ' || enumlabel FROM pg_enum
  UNION ALL SELECT 'ns ' || nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_temp\\_%' AND nspname NOT LIKE 'pg\\_toast\\_temp\\_%'
  UNION ALL SELECT 'role ' || rolname FROM pg_roles
  UNION ALL SELECT 'stats ' || count(*)::text FROM pg_statistic WHERE starelid >= 16384
  UNION ALL SELECT 'db ' || datname FROM pg_database
) s`

/** The user tables. */
const TABLES = `
SELECT format('%I.%I', n.nspname, c.relname) AS name, c.relispartition AS partition
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%'`

/** The template's catalog digest, its tables, and the rows of those that hold some (as JSON). */
interface Template { shape: string, emptied: string[], kept: Map<string, string>, tables: Set<string> }

async function shapeOf (db: Database): Promise<string> {
  return (await db.query<{ shape: string }>(SHAPE)).rows[0]?.shape ?? ''
}

/** Opened databases are reused within this process; each file's first one is read as the template. */
export function pgliteReuse (open: () => Promise<Database>): {
  acquire(): Promise<Database>
  release(db: Database): Promise<void>
  /**
   * Closes the idle ones, and any given back from now on: for the process's last teardown. An
   * open PGlite keeps its process alive: a transaction's pending statistics arm PostgreSQL's idle
   * flush timer (10 s), a JavaScript timer here.
   */
  drain(): Promise<void>
} {
  const idle: Database[] = []
  let template: Promise<Template> | undefined
  let draining = false

  const describe = async (db: Database): Promise<Template> => {
    const tables = (await db.query<{ name: string, partition: boolean }>(TABLES)).rows
    const emptied: string[] = []
    const kept = new Map<string, string>()
    for (const { name } of tables) {
      const r = await db.query<{ rows: string | null }>(`SELECT json_agg(t)::text AS rows FROM ${name} t`)
      const rows = r.rows[0]?.rows ?? null
      if (rows === null) emptied.push(name)
      else kept.set(name, rows)
    }
    return { shape: await shapeOf(db), emptied, kept, tables: new Set(tables.map(t => t.name)) }
  }

  /** Back to the template's state, or false (then it is closed by the caller). */
  const reset = async (db: Database, tpl: Template): Promise<boolean> => {
    // Session state: settings, prepared statements, LISTENs, advisory locks, temporary tables.
    // Refused inside a transaction block, which a test may have left open: then not reusable.
    await db.exec('DISCARD ALL')
    // The job engine makes a partition of its job table per queue: an app's queues, made again
    // by the next app. Partitions the template lacks are dropped; any other new table stays and
    // makes the shape differ.
    const now = (await db.query<{ name: string, partition: boolean }>(TABLES)).rows
    for (const { name } of now.filter(t => t.partition && !tpl.tables.has(t.name))) await db.exec(`DROP TABLE ${name}`)
    if (await shapeOf(db) !== tpl.shape) return false
    await db.exec(`TRUNCATE ${[...tpl.emptied, ...tpl.kept.keys()].join(', ')} RESTART IDENTITY CASCADE`)
    // The rows the template has (applied migrations, the job engine's version row, which an
    // app's job engine updates as it runs), as they were.
    for (const [name, rows] of tpl.kept) {
      await db.query(`INSERT INTO ${name} SELECT * FROM json_populate_recordset(NULL::${name}, $1)`, [rows])
    }
    return true
  }

  return {
    async acquire () {
      const reused = idle.pop()
      if (reused !== undefined) return reused
      const db = await open()
      template ??= describe(db)
      await template
      return db
    },
    async release (db) {
      let ok = false
      try {
        ok = template !== undefined && await reset(db, await template)
      } catch {
        ok = false
      }
      if (ok && !draining) idle.push(db)
      else await db.close()
    },
    async drain () {
      draining = true
      for (const db of idle.splice(0)) await db.close()
    }
  }
}
