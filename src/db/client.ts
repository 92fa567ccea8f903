import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createRequire } from 'node:module'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'
import pg from 'pg'
import { makeDataDir } from '../config/data-dir.js'
import { initDataDir } from './pglite-initdb.js'
import { pgliteInitdbParams, pgliteStartParams } from './pglite-settings.js'

export type Row = Record<string, unknown>
export interface QueryResult<R> { rows: R[], rowCount: number }

/** Anything SQL can be sent to: the database itself or an open transaction. */
export interface Queryable {
  query<R = Row>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>>
  /** A script of several statements without parameters (migrations). */
  exec(text: string): Promise<void>
  /** In a transaction: run `fn` once it has committed (never on rollback). Absent outside one. */
  afterCommit?: (fn: () => void) => void
}

/** The Database port: PGlite in-process, or a PostgreSQL server through a pg Pool. One dialect. */
/** A read that will be followed by an update in the same transaction may lock its row. */
export interface LockOptions { forUpdate?: boolean }

/** The SELECT's tail for `LockOptions`: ' FOR UPDATE' or nothing. */
export function lockClause (opts: LockOptions): string {
  return opts.forUpdate === true ? ' FOR UPDATE' : ''
}

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres'
  /** Runs fn in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>
  /** Cheap round trip, for health checks. */
  ping(): Promise<void>
  /** Connections now (metrics): open, idle, and callers waiting for one. PGlite has one connection. */
  poolStats(): PoolStats
  close(): Promise<void>
  /** PGlite only: a dump of the data directory (builds the migrated template tests start from). */
  dumpDataDir?: () => Promise<Blob>
  /**
   * PostgreSQL only: LISTEN on `channel` on a connection of its own (outside the pool), calling
   * `onNotify` with each NOTIFY's payload. A lost connection is remade (1 s apart) and
   * `onReconnect` called, since notifications sent meanwhile are lost. Resolves once listening.
   */
  listen?: (channel: string, onNotify: (payload: string) => void, onReconnect: () => void) => Promise<Listener>
}

/** A LISTEN connection; `close` ends it for good. */
export interface Listener { close(): Promise<void> }

export interface PoolStats { total: number, idle: number, waiting: number }

/**
 * The database did not answer: refused, reset or terminated connection, a connect/acquire or
 * query timeout, a closed embedded database. Not the caller's fault and not a bug: the error
 * handler answers 503 SERVICE_UNAVAILABLE with Retry-After, and nobody may read it as "no such
 * row" (an outage is never a logout).
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError'
  constructor (cause: unknown) {
    super(`database unavailable: ${(cause as Error | null)?.message ?? String(cause)}`, { cause })
  }
}

// Node socket errors that mean "no usable connection to the server".
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND',
  'EAI_AGAIN'
])
// What pg and pg-pool say (plain Errors without a code) when a connection breaks or a deadline passes.
const UNAVAILABLE_MESSAGES = new RegExp('^(' + [
  'Connection terminated', 'timeout exceeded when trying to connect', 'Query read timeout',
  'Client has encountered a connection error', 'Client was closed', 'Cannot use a pool after calling end',
  'PGlite is clos(ed|ing)'
].join('|') + ')')

/** True for a failure to reach the database at all, as opposed to an error in a statement. */
export function isDatabaseUnavailable (err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true
  const e = err as { code?: unknown, message?: unknown } | null
  const code = typeof e?.code === 'string' ? e.code : ''
  // SQLSTATE class 08 (connection exception), 57014 (statement_timeout / cancel), 57P01–57P05
  // (server shutting down or restarting), 53300 (too many connections);
  // 25P03 / 25P04: the server ended a session whose transaction sat idle or ran past its timeout.
  if (/^08...$/.test(code) || code === '57014' || /^57P0[1-5]$/.test(code) || code === '53300') return true
  if (code === '25P03' || code === '25P04') return true
  if (NETWORK_CODES.has(code)) return true
  return typeof e?.message === 'string' && UNAVAILABLE_MESSAGES.test(e.message)
}

/** Re-throws a connectivity failure as DatabaseUnavailableError; anything else unchanged. */
function classified (err: unknown): unknown {
  return isDatabaseUnavailable(err) && !(err instanceof DatabaseUnavailableError)
    ? new DatabaseUnavailableError(err)
    : err
}

async function guarded<T> (p: Promise<T>): Promise<T> {
  try {
    return await p
  } catch (err) {
    throw classified(err)
  }
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
  /** Deadlines (PostgreSQL only; PGlite runs in-process): see DEFAULT_TIMEOUTS. */
  connectTimeoutMs?: number
  queryTimeoutMs?: number
  transactionTimeoutMs?: number
  /** Called for pool-level connection errors (logged, never thrown). */
  onError?: (err: Error) => void
}

/** For callers without a Config (scripts, tests); the service passes DATABASE_*_TIMEOUT_MS. */
const DEFAULT_TIMEOUTS = { connectTimeoutMs: 3000, queryTimeoutMs: 5000, transactionTimeoutMs: 10000 } as const

export async function openDatabase (opts: DatabaseOptions): Promise<Database> {
  return opts.url !== null ? openPostgres(opts.url, opts) : await openPglite(opts)
}

function openPostgres (url: string, opts: DatabaseOptions): Database {
  const connectTimeoutMs = opts.connectTimeoutMs ?? DEFAULT_TIMEOUTS.connectTimeoutMs
  const queryTimeoutMs = opts.queryTimeoutMs ?? DEFAULT_TIMEOUTS.queryTimeoutMs
  const transactionTimeoutMs = opts.transactionTimeoutMs ?? DEFAULT_TIMEOUTS.transactionTimeoutMs
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolMax ?? 10,
    // Every wait has a deadline, so a frozen server costs a request seconds, not minutes:
    // connecting and waiting for a free client (connectionTimeoutMillis), each statement on the
    // server (statement_timeout) and on the wire (query_timeout: a server that stopped answering
    // cannot cancel anything), and an open transaction left idle by a stuck caller.
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1000,
    // The server's idle-in-transaction timeout is the backstop for the transaction's own deadline
    // below (for a process too stalled to end its client), so it comes a second later: at the same
    // value the two raced, and the server's FATAL read as a lost connection.
    idle_in_transaction_session_timeout: transactionTimeoutMs + 1000,
    idleTimeoutMillis: 30000,
    ...(opts.schema !== undefined ? { options: `-c search_path=${opts.schema}`, application_name: opts.schema } : {})
  })
  // An idle client whose backend was terminated emits 'error' on the pool; without a listener
  // that would crash the process. The pool discards the client and makes a new one on demand.
  pool.on('error', err => opts.onError?.(err))
  const run = async <R>(
    q: pg.Pool | pg.PoolClient,
    text: string,
    params?: readonly unknown[]
  ): Promise<QueryResult<R>> => {
    const r = await guarded(q.query(text, params as unknown[] | undefined))
    return { rows: r.rows as R[], rowCount: r.rowCount ?? 0 }
  }
  return {
    kind: 'postgres',
    query: async (text, params) => await run(pool, text, params),
    async exec (text) { await run(pool, text) },
    async transaction (fn) {
      const client = await guarded(pool.connect())
      let broken: Error | undefined
      let expired = false
      // While a client is checked out the pool no longer listens for its errors: a backend that
      // goes away between two statements (terminated, idle_in_transaction_session_timeout under
      // load) made pg emit 'error' with no listener, an uncaught exception that ended the process.
      // Here it breaks this transaction only: its next statement fails (503), the client is dropped.
      // Once the deadline has ended the client, what it says after is ours, not a lost connection.
      const lost = (err: Error): void => {
        broken ??= err
        if (!expired) opts.onError?.(err)
      }
      client.on('error', lost)
      // The whole transaction has one deadline too: when it passes, the connection is cut, so
      // the statement in flight fails at once, the server rolls back, and the caller gets 503.
      // pg's client.end() does that: with a statement in flight it closes the socket rather than
      // wait for the answer (the statement fails with "Connection terminated"); between two
      // statements it says goodbye, and the next one fails. The release below drops the client.
      const timer = setTimeout(() => {
        expired = true
        broken = new Error(`transaction exceeded ${transactionTimeoutMs} ms`)
        client.end().catch(() => {})
      }, transactionTimeoutMs)
      const query = async <R>(text: string, params?: readonly unknown[]): Promise<QueryResult<R>> => {
        try {
          return await run<R>(client, text, params)
        } catch (err) {
          throw expired ? new DatabaseUnavailableError(broken) : err
        }
      }
      const committed: Array<() => void> = []
      try {
        await query('BEGIN')
        const result = await fn({
          query,
          async exec (text: string) { await query(text) },
          afterCommit: f => { committed.push(f) }
        })
        await query('COMMIT')
        for (const f of committed) f()
        return result
      } catch (err) {
        if (broken === undefined) await client.query('ROLLBACK').catch((e: Error) => { broken = e })
        throw expired ? new DatabaseUnavailableError(broken) : err
      } finally {
        clearTimeout(timer)
        // A client whose ROLLBACK failed (or whose deadline passed, or whose connection was lost) is
        // not returned to the pool; it keeps the listener above while it is ended.
        if (broken === undefined) client.removeListener('error', lost)
        client.release(broken)
      }
    },
    async ping () { await run(pool, 'SELECT 1') },
    // Named apart from the pool's connections (pg_stat_activity tells them apart): the listener is
    // not the pool's, and a count of the pool's backends must not include it.
    listen: async (channel, onNotify, onReconnect) => await listenOn(
      {
        connectionString: url,
        connectionTimeoutMillis: connectTimeoutMs,
        application_name: `${opts.schema ?? 'workspace-service'}:listen`
      },
      channel,
      onNotify,
      onReconnect
    ),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close () {
      if (!pool.ended) await pool.end()
    }
  }
}

const LISTEN_RETRY_MS = 1000

/**
 * One client that LISTENs on `channel` for as long as it is open: whenever its connection is lost
 * (the server restarted, the backend was terminated), a new one is made, 1 s apart, and
 * `onReconnect` is called once it listens again. The first connection must succeed.
 */
async function listenOn (
  config: pg.ClientConfig,
  channel: string,
  onNotify: (payload: string) => void,
  onReconnect: () => void
): Promise<Listener> {
  let closed = false
  let client: pg.Client | null = null
  let retry: NodeJS.Timeout | null = null
  const connect = async (): Promise<void> => {
    const c = new pg.Client(config)
    c.on('notification', n => { if (n.channel === channel) onNotify(n.payload ?? '') })
    c.on('error', () => { lost(c) })
    c.on('end', () => { lost(c) })
    client = c
    await c.connect()
    await c.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
  }
  const again = (): void => {
    retry = setTimeout(() => {
      retry = null
      if (closed) return
      connect().then(onReconnect, () => { if (client !== null) lost(client) })
    }, LISTEN_RETRY_MS)
    retry.unref()
  }
  const lost = (c: pg.Client): void => {
    if (client !== c) return
    client = null
    c.end().catch(() => {})
    if (!closed) again()
  }
  await connect()
  return {
    async close () {
      closed = true
      if (retry !== null) clearTimeout(retry)
      const c = client
      client = null
      await c?.end().catch(() => {})
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
      throw new DatabaseLockedError(
        `The embedded database in ${dir} is in use by a running process (pid ${owner}). ` +
        'Stop it, or set DATABASE_URL to use a PostgreSQL server.'
      )
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
 * PostgreSQL compiled to WebAssembly (9 MB), compiled once per process: every PGlite opened after
 * the first (tests open one per app) instantiates the same module instead of reading and compiling
 * it again. Nothing more stays in memory: each instance holds its module anyway.
 */
type PgliteWasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>
// Node's WebAssembly global (its types come with the DOM lib, which this project does not load).
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { compile(bytes: Uint8Array): Promise<PgliteWasmModule> }
}
let pgliteWasm: Promise<PgliteWasmModule> | undefined
async function pgliteWasmModule (): Promise<PgliteWasmModule> {
  pgliteWasm ??= wasm.compile(
    readFileSync(join(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')), 'pglite.wasm'))
  )
  return await pgliteWasm
}

/** The embedded database's directory under DATA_DIR, made if missing, and its lock taken. */
function lockedPgliteDir (dataDir: string): { dir: string, unlock: () => void } {
  const dir = join(dataDir, 'pglite')
  makeDataDir(dataDir)
  mkdirSync(dir, { recursive: true })
  return { dir, unlock: lockDataDir(dir) }
}

/**
 * A new cluster is made in a child process (pglite-initdb.ts). Should that fail, PGlite.create
 * runs initdb in the service's process: more memory for good, same result.
 */
async function initIfNew (dir: string): Promise<void> {
  if (!existsSync(join(dir, 'PG_VERSION'))) await initDataDir(dir).catch(() => {})
}

/**
 * The embedded database's cluster made, when DATA_DIR holds none yet, before the service loads the
 * rest of its modules (src/server.ts): the initdb child's peak (≈ 410 MB) then coincides with a
 * parent of ≈ 65 MB instead of ≈ 105 MB. Any failure is left to openDatabase, which meets it again
 * and explains it (a locked or unwritable DATA_DIR).
 */
export async function prepareDataDir (dataDir: string): Promise<void> {
  try {
    const { dir, unlock } = lockedPgliteDir(dataDir)
    try { await initIfNew(dir) } finally { unlock() }
  } catch {
    // Said by openDatabase, with the setting to change.
  }
}

async function openPglite (opts: DatabaseOptions): Promise<Database> {
  let dir: string | null = null
  let unlock = (): void => {}
  if (opts.dataDir !== null) ({ dir, unlock } = lockedPgliteDir(opts.dataDir))
  let db: PGlite
  try {
    if (dir !== null && opts.loadDataDir === undefined) await initIfNew(dir)
    // The settings (pglite-settings.ts) keep its WebAssembly heap small; tests' databases (in
    // memory, from a dump, or initialised in this process) and the service's get the same ones.
    db = await PGlite.create({
      pgliteWasmModule: await pgliteWasmModule(),
      startParams: [...pgliteStartParams],
      initDbStartParams: [...pgliteInitdbParams],
      ...(dir !== null ? { dataDir: dir } : {}),
      ...(opts.loadDataDir !== undefined ? { loadDataDir: opts.loadDataDir } : {})
    })
  } catch (err) {
    unlock()
    throw err
  }
  // Callers holding or queued for PGlite's one connection (top-level statements and
  // transactions; a transaction's own statements run on the connection it holds).
  let busy = 0
  const counted = async <T>(work: Promise<T>): Promise<T> => {
    busy++
    try { return await work } finally { busy-- }
  }
  const wrap = (q: Pick<PGlite, 'query' | 'exec'>, top: boolean): Queryable => {
    const on = async <T>(work: Promise<T>) => await guarded(top ? counted(work) : work)
    return {
      async query<R>(text: string, params?: readonly unknown[]) {
        const r = await on(q.query<R>(text, params as unknown[] | undefined))
        return { rows: r.rows, rowCount: r.affectedRows ?? r.rows.length }
      },
      async exec (text) { await on(q.exec(text)) }
    }
  }
  const base = wrap(db, true)
  return {
    kind: 'pglite',
    query: base.query,
    exec: base.exec,
    // PGlite has one connection; its transaction() holds an exclusive lock for the duration.
    async transaction (fn) {
      // PGlite runs PostgreSQL in this thread and settles its promises without a turn of the
      // event loop, so a loop of transactions (the expiry sweep's batches) would starve every
      // socket and timer until it ends: 49k invitations falling due at once stalled the service
      // for 70–110 s. One turn before each transaction lets requests in between batches.
      await yieldToEventLoop()
      const committed: Array<() => void> = []
      const result = await guarded(counted(db.transaction(async tx => await fn({
        ...wrap(tx, false), afterCommit: f => { committed.push(f) }
      }))))
      for (const f of committed) f()
      return result
    },
    async ping () { await base.query('SELECT 1') },
    poolStats: () => ({ total: 1, idle: busy === 0 ? 1 : 0, waiting: Math.max(0, busy - 1) }),
    async close () {
      if (db.closed) return
      try { await db.close() } finally { unlock() }
    },
    async dumpDataDir () { return await db.dumpDataDir('none') }
  }
}
