import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
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
  /** DATA_DIR: PGlite keeps its files in DATA_DIR/pglite; null keeps the database in memory. */
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
    ...(opts.schema !== undefined ? { options: `-c search_path=${opts.schema}`, application_name: opts.schema } : {})
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
    async close () {
      if (!pool.ended) await pool.end()
    }
  }
}

/** The embedded database's directory is held by another live process (a running service). */
export class DatabaseLockedError extends Error {
  override name = 'DatabaseLockedError'
}

/**
 * PGlite is one process's database: two processes opening the same directory would corrupt it.
 * A lock file holding the owner's pid guards it; a lock left by a dead process is taken over.
 */
function lockDataDir (dir: string): () => void {
  const file = join(dir, 'lock.pid')
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' })
  } catch {
    const owner = Number(readFileSync(file, 'utf8').trim())
    if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isAlive(owner)) {
      throw new DatabaseLockedError(`The embedded database in ${dir} is in use by a running process (pid ${owner}). Stop it, or set DATABASE_URL to use a PostgreSQL server.`)
    }
    writeFileSync(file, String(process.pid))
  }
  return () => { rmSync(file, { force: true }) }
}

function isAlive (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * The first start creates the cluster (initdb), which grows PGlite's WebAssembly memory to about
 * 800 MB; WebAssembly memory never shrinks, so a process that ran initdb keeps it for life. Run in
 * a worker thread, that memory is freed when the worker ends, and the service opens the finished
 * directory at the usual ~370 MB, for about one extra second on the first start only.
 */
async function initDataDirInWorker (dir: string): Promise<void> {
  const pglite = import.meta.resolve('@electric-sql/pglite')
  // Dynamic imports only: eval'd worker code is a script or a module depending on the Node
  // version (ESM detection is the default from 20.19 / 22.7) and on flags such as --input-type.
  const code = `
    Promise.all([import('node:worker_threads'), import(${JSON.stringify(pglite)})]).then(async ([{ parentPort, workerData }, { PGlite }]) => {
      const db = await PGlite.create({ dataDir: workerData })
      await db.close()
      parentPort.postMessage('initialized')
    })`
  const worker = new Worker(code, { eval: true, workerData: dir })
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('message', () => { resolve() })
      worker.once('error', reject)
      worker.once('exit', code => { reject(new Error(`initdb worker exited with code ${code}`)) })
    })
  } finally {
    await worker.terminate()
  }
}

async function openPglite (opts: DatabaseOptions): Promise<Database> {
  const dir = opts.dataDir !== null ? join(opts.dataDir, 'pglite') : null
  let unlock = (): void => {}
  if (dir !== null) {
    mkdirSync(dir, { recursive: true })
    unlock = lockDataDir(dir)
  }
  let db: PGlite
  try {
    if (dir !== null && opts.loadDataDir === undefined && !existsSync(join(dir, 'PG_VERSION'))) {
      // Should the worker fail, PGlite.create below runs initdb in this thread: more memory, same result.
      await initDataDirInWorker(dir).catch(() => {})
    }
    db = await PGlite.create({
      ...(dir !== null ? { dataDir: dir } : {}),
      ...(opts.loadDataDir !== undefined ? { loadDataDir: opts.loadDataDir } : {})
    })
  } catch (err) {
    unlock()
    throw err
  }
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
    async close () {
      if (db.closed) return
      try { await db.close() } finally { unlock() }
    },
    async dumpDataDir () { return await db.dumpDataDir('none') }
  }
}
