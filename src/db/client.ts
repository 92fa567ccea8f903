import { mkdirSync } from 'node:fs'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'

export type Row = Record<string, unknown>
export interface QueryResult<R> { rows: R[], rowCount: number }

/** Anything SQL can be sent to: the database itself or an open transaction. */
export interface Queryable {
  query<R = Row>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>>
  /** A script of several statements without parameters (migrations). */
  exec(text: string): Promise<void>
}

/** The Database port: PGlite in-process, or a PostgreSQL server through a pg Pool. One dialect. */
export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres'
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Cheap round trip, for health checks. */
  ping(): Promise<void>
  close(): Promise<void>
  /** PGlite only: a dump of the data directory (builds the migrated template tests start from). */
  dumpDataDir?: () => Promise<Blob>
}

export interface DatabaseOptions {
  /** postgres:// URL; null selects the embedded PGlite. */
  url: string | null
  /** PGlite data directory; null keeps the database in memory. */
  dataDir: string | null
  /** A dump of an initialised PGlite data directory to start from (tests: skips initdb). */
  loadDataDir?: Blob
  /** PostgreSQL schema to use as search_path (tests isolate each app instance this way). */
  schema?: string
  poolMax?: number
  /** Called for pool-level connection errors (logged, never thrown). */
  onError?: (err: Error) => void
}

export async function openDatabase (opts: DatabaseOptions): Promise<Database> {
  return opts.url !== null ? openPostgres(opts.url, opts) : await openPglite(opts)
}

function openPostgres (url: string, opts: DatabaseOptions): Database {
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 10,
    // Fail fast when the server is away; the pool reconnects by itself when it is back.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30000,
    ...(opts.schema !== undefined ? { options: `-c search_path=${opts.schema}` } : {})
  })
  // An idle client whose backend was terminated emits 'error' on the pool; without a listener
  // that would crash the process. The pool discards the client and makes a new one on demand.
  pool.on('error', err => opts.onError?.(err))
  const query = async <R>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>> => {
    const r = await pool.query(text, params as unknown[] | undefined)
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
  }
  return {
    kind: 'postgres',
    query,
    async exec (text) { await pool.query(text) },
    async transaction (fn) {
      const client = await pool.connect()
      let broken: Error | undefined
      try {
        await client.query('BEGIN')
        const tx: Queryable = {
          async query<R>(text: string, params?: readonly unknown[]) {
            const r = await client.query(text, params as unknown[] | undefined)
            return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
          },
          async exec (text: string) { await client.query(text) }
        }
        const result = await fn(tx)
        await client.query('COMMIT')
        return result
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => { broken = e })
        throw err
      } finally {
        // A client whose ROLLBACK failed is not returned to the pool.
        client.release(broken)
      }
    },
    async ping () { await pool.query('SELECT 1') },
    async close () { await pool.end() }
  }
}

async function openPglite (opts: DatabaseOptions): Promise<Database> {
  if (opts.dataDir !== null) mkdirSync(opts.dataDir, { recursive: true })
  const db = await PGlite.create({
    ...(opts.dataDir !== null ? { dataDir: opts.dataDir } : {}),
    ...(opts.loadDataDir !== undefined ? { loadDataDir: opts.loadDataDir } : {})
  })
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>): Queryable => ({
    async query<R>(text: string, params?: readonly unknown[]) {
      const r = await q.query<R>(text, params as unknown[] | undefined)
      return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length }
    },
    async exec (text) { await q.exec(text) }
  })
  const base = wrap(db)
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    // PGlite has one connection; its transaction() holds an exclusive lock for the duration.
    async transaction (fn) { return await db.transaction(async tx => await fn(wrap(tx))) },
    async ping () { await db.query('SELECT 1') },
    async close () { await db.close() },
    async dumpDataDir () { return await db.dumpDataDir('none') }
  }
}
