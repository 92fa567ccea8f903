import { createHash, randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { buildApp, type AppOptions } from '../../src/app.js'
import { FakeClock } from '../../src/clock.js'
import { loadConfig, type Config } from '../../src/config.js'
import { openDatabase, type Database, type DatabaseOptions } from '../../src/db/client.js'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { installJobSchema } from '../../src/jobs/engine.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { insertUser, type Role } from '../../src/db/users.js'
import { projectRoot } from '../../src/paths.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { pgliteReuse } from './pglite-reuse.js'
import { ensureConsoleBuilt } from '../../scripts/lib/console-build.js'
import type { Principal } from '../../src/principal.js'

// One build(t) helper: the app built by the production buildApp (same server options), on
// PGlite in memory by default or on the PostgreSQL at TEST_DATABASE_URL (a schema of its own
// per app instance), torn down with the test.

interface Teardown { teardown(fn: () => unknown): void }

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? null
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? null

/** Configuration as production loads it, from an environment; nothing kept on disk. */
export function testConfig (env: Record<string, string> = {}): Config {
  return loadConfig({ LOG_LEVEL: 'silent', ...env }, { root: projectRoot, ephemeral: !('DATA_DIR' in env) })
}

let templatePromise: Promise<Blob> | undefined

/** The template's name: the migrations' checksums and the versions of PGlite and pg-boss. */
function templateKey (): string {
  return createHash('sha256').update(
    loadMigrations().map(m => m.checksum).join()
  ).update(
    readFileSync(join(projectRoot, 'node_modules/@electric-sql/pglite/package.json'))
  ).update(
    readFileSync(join(projectRoot, 'node_modules/pg-boss/package.json'))
  ).update('checkpointed, with jobs, without template databases').digest('hex').slice(0, 16)
}

const templateDir = join(tmpdir(), 'workspace-service-test')

/**
 * PGlite's initdb takes seconds; a migrated data directory is dumped once (cached in the OS temp
 * dir, keyed by the migrations' checksums and the versions of PGlite and pg-boss) and every test
 * database starts from that dump. The dump holds the job engine's tables too (installJobSchema,
 * the default JOBS_SCHEMA): each app's start found them missing and made them, over a second of
 * CPU per test database; its queues are made by each app, with its own settings.
 */
async function pgliteTemplate (): Promise<Blob> {
  templatePromise ??= (async () => {
    const dir = templateDir
    const file = join(dir, `pglite-${templateKey()}.tar`)
    if (existsSync(file)) return new Blob([readFileSync(file)])
    const db = await openDatabase({ url: null, dataDir: null })
    await migrate(db)
    await installJobSchema(db, testConfig().jobs.schema)
    // template0 and template1 (15 of the dump's 41 MB) serve only CREATE DATABASE, which no test
    // runs on PGlite: without them each test database unpacks a third less (0.37 against 0.48 CPU-s).
    await db.query("UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')")
    await db.query('DROP DATABASE template0')
    await db.query('DROP DATABASE template1')
    // A dump is of a running server: each database made from it replays the WAL written since the
    // last checkpoint (the migrations: half a second per database). After this one, nothing.
    await db.query('CHECKPOINT')
    const dump = await (db.dumpDataDir as () => Promise<Blob>)()
    await db.close()
    mkdirSync(dir, { recursive: true })
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()))
    renameSync(tmp, file) // atomic: parallel test files never read half a template
    return dump
  })()
  return await templatePromise
}

let seedPromise: Promise<string> | undefined

/**
 * A DATA_DIR for the service started as a child process, its embedded database already made and
 * migrated: the template above, written out once as a directory (beside the dump) and copied. On
 * an empty DATA_DIR the child ran PGlite's initdb (≈ 4 CPU-s) in tests about something else: a
 * crash, the logs, a drain. The tests of a first start (first-run, persistence, config's new
 * installation) keep an empty directory. Removed when the test ends.
 */
export async function seededDataDir (t: Teardown, prefix: string): Promise<string> {
  seedPromise ??= (async () => {
    const seed = join(templateDir, `pglite-${templateKey()}.dir`)
    if (existsSync(seed)) return seed
    const staging = `${seed}.${process.pid}.tmp`
    rmSync(staging, { recursive: true, force: true })
    const db = await openDatabase({ url: null, dataDir: staging, loadDataDir: await pgliteTemplate() })
    await db.close()
    try {
      renameSync(join(staging, 'pglite'), seed) // atomic: parallel test files never copy half a seed
    } catch (err) {
      if (!existsSync(seed)) throw err // another file made it first
    }
    rmSync(staging, { recursive: true, force: true })
    return seed
  })()
  const seed = await seedPromise
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  cpSync(seed, join(dir, 'pglite'), { recursive: true })
  return dir
}

/** TEST_DATABASE_URL with another database name. */
function databaseUrl (name: string): string {
  const url = new URL(TEST_DATABASE_URL as string)
  url.pathname = `/${name}`
  return url.href
}

let postgresTemplatePromise: Promise<string> | undefined

/**
 * On PostgreSQL the template is a database: made once (per TEST_DATABASE_URL database and
 * templateKey), migrated, with the job engine's tables, and copied for each test by CREATE
 * DATABASE … TEMPLATE (≈ 50 ms). Each test used to migrate a schema of its own and install the job
 * engine's tables in another: 1–2 s of wall time a build(t). The first test process makes it
 * under an advisory lock (the others wait, then find it), under a staging name renamed when
 * complete; templates of earlier migrations are dropped then. `.ci/run` drops them all with its
 * throwaway database.
 */
async function postgresTemplate (): Promise<string> {
  postgresTemplatePromise ??= (async () => {
    const base = new URL(TEST_DATABASE_URL as string).pathname.slice(1)
    const name = `${base}_tpl_${templateKey()}`
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string })
    await admin.connect()
    try {
      await admin.query('SELECT pg_advisory_lock(hashtext($1))', [name])
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (found.rowCount === 0) {
        const staging = `${base}_tpl_staging`
        await admin.query(`DROP DATABASE IF EXISTS "${staging}" WITH (FORCE)`)
        await admin.query(`CREATE DATABASE "${staging}"`)
        const db = await openDatabase({ url: databaseUrl(staging), dataDir: null })
        try {
          await migrate(db)
          await installJobSchema(db, testConfig().jobs.schema)
        } finally {
          await db.close()
        }
        await admin.query(`ALTER DATABASE "${staging}" RENAME TO "${name}"`)
        const old = await admin.query<{ datname: string }>(
          "SELECT datname FROM pg_database WHERE starts_with(datname, $1 || '_tpl_') AND datname <> $2", [base, name]
        )
        for (const { datname } of old.rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`)
      }
    } finally {
      await admin.end() // releases the lock
    }
    return name
  })()
  return await postgresTemplatePromise
}

/**
 * A fresh, migrated database for one test: PGlite from the template, or on PostgreSQL a database
 * copied from the template (`url` is its address), dropped when the test ends. `queryTimeoutMs`
 * (the service's 5 s by default) is PostgreSQL's statement limit; PGlite has none.
 */
export async function testDatabase (
  t: Teardown,
  opts: Pick<DatabaseOptions, 'onError' | 'queryTimeoutMs'> = {}
): Promise<Database & { url?: string }> {
  if (TEST_DATABASE_URL !== null) {
    const template = await postgresTemplate()
    const name = `${new URL(TEST_DATABASE_URL).pathname.slice(1)}_t_${randomBytes(6).toString('hex')}`
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL })
    await admin.connect()
    try {
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`)
    } finally {
      await admin.end()
    }
    const url = databaseUrl(name)
    const db = await openDatabase({ url, dataDir: null, poolMax: 10, ...opts })
    t.teardown(async () => {
      await db.close()
      const c = new pg.Client({ connectionString: TEST_DATABASE_URL })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
      await c.end()
    })
    return Object.assign(db, { url })
  }
  drainAtEnd ??= import('tap').then(tap => { tap.default.teardown(async () => { await pglite.drain() }) })
  await drainAtEnd
  const db = await pglite.acquire()
  t.teardown(async () => { await pglite.release(db) })
  return db
}

/** Embedded test databases, emptied and handed to the next test of this process (pglite-reuse.ts). */
const pglite = pgliteReuse(async () =>
  await openDatabase({ url: null, dataDir: null, loadDataDir: await pgliteTemplate() }))
let drainAtEnd: Promise<void> | undefined

export interface TestApp {
  app: FastifyInstance
  db: Database
  clock: FakeClock
  config: Config
  inject(opts: InjectOptions): Promise<LightMyRequestResponse>
  /** A workspace with one admin (or member) signed in; returns the cookie header value. */
  signIn(opts?: { role?: Role, workspaceId?: string, email?: string, workspaceName?: string }): Promise<SignedIn>
}

export interface SignedIn { cookie: string, userId: string, workspaceId: string, email: string, sessionId: string }

export interface BuildOptions extends Partial<Omit<AppOptions, 'config'>> {
  env?: Record<string, string>
  /** Runs on the built app before it is ready: a test's own hooks (they cannot be added later). */
  beforeReady?: (app: FastifyInstance) => void
}

let consoleBuilt: Promise<void> | undefined

export async function build (t: Teardown, opts: BuildOptions = {}): Promise<TestApp> {
  // The pages serve the admin console's bundle (dist/console/): built once per process when stale.
  consoleBuilt ??= ensureConsoleBuilt()
  await consoleBuilt
  const db = opts.db ?? await testDatabase(t)
  const config = testConfig(opts.env)
  const clock = opts.clock instanceof FakeClock ? opts.clock : new FakeClock()
  const { env: _env, beforeReady, ...rest } = opts
  const app = await buildApp({ logger: false, ...rest, config, clock, db })
  t.teardown(async () => { await app.close() })
  beforeReady?.(app)
  await app.ready()
  let n = 0
  const signIn: TestApp['signIn'] = async (o = {}) => {
    const now = clock.now()
    const workspaceId = o.workspaceId ?? (await insertWorkspace(db, { name: o.workspaceName ?? 'Acme', now })).id
    const email = o.email ?? `user${++n}-${randomBytes(4).toString('hex')}@example.com`
    const user = await insertUser(db, { workspaceId, email, name: null, role: o.role ?? 'admin', now })
    const { sessionId, token } = await app.services.sessions.start(db, user.id, 'signup')
    return { cookie: `${SESSION_COOKIE}=${token}`, userId: user.id, workspaceId, email, sessionId }
  }
  return { app, db, clock, config, inject: async o => await app.inject(o), signIn }
}

/** A signed-in user as the principal a service call takes (tests calling services directly). */
export function principalOf (u: SignedIn, role: Role, kind: Principal['kind'] = 'session'): Principal {
  const ids = { userId: u.userId, workspaceId: u.workspaceId, email: u.email }
  return { kind, ...ids, name: null, role, sessionId: null, apiKeyId: null, requestId: null }
}
