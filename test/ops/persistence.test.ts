import t from 'tap'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { openDatabase, DatabaseLockedError, isDatabaseUnavailable } from '../../src/db/client.js'
import { loadMigrations, migrate, MigrationError } from '../../src/db/migrate.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { insertUser } from '../../src/db/users.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { projectRoot } from '../../src/paths.js'
import { build, testConfig, testDatabase, TEST_DATABASE_URL } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startTcpProxy } from '../helpers/tcp-proxy.js'
import { tsImport } from '../helpers/service-process.js'

t.test('restarting on the same DATA_DIR keeps data and sessions', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-data-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const config = testConfig({ DATA_DIR: dir })

  const first = await buildApp({ config, logger: false })
  // Opening PGlite and migrating is the database plugin's start: under load (CI, 2 CPUs busy) it
  // took past Fastify's 10 s pluginTimeout and this very test failed with "Plugin did not start
  // in time: 'database'"; a start is given two minutes (src/plugins/server-options.ts).
  t.ok((first.initialConfig.pluginTimeout ?? 0) >= 60_000, `a slow start is no failure: pluginTimeout ${first.initialConfig.pluginTimeout} ms`)
  const now = new Date()
  const ws = await insertWorkspace(first.db, { name: 'Persisted', now })
  const user = await insertUser(
    first.db, { workspaceId: ws.id, email: 'keep@example.com', name: 'Keep', role: 'admin', now }
  )
  const { token } = await first.services.sessions.start(first.db, user.id, 'signup')
  await first.close()

  // Same DATA_DIR, fresh config load: the generated session secret was kept on disk too.
  const again = await buildApp({ config: testConfig({ DATA_DIR: dir }), logger: false })
  t.teardown(async () => { await again.close() })
  const rows = await again.db.query<{ name: string }>('SELECT name FROM workspaces WHERE id = $1', [ws.id])
  t.same(rows.rows, [{ name: 'Persisted' }])
  const me = await again.inject({
    method: 'GET',
    url: '/api/users/me',
    headers: { cookie: `${SESSION_COOKIE}=${token}` }
  })
  t.not(me.statusCode, 401, 'a session from before the restart is still valid')
})

t.test('the embedded database refuses a second process-level opener while in use', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-lock-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  // Simulate another live process holding the lock: PID 1 is always alive.
  const { mkdirSync, writeFileSync } = await import('node:fs')
  mkdirSync(join(dir, 'pglite'), { recursive: true })
  writeFileSync(join(dir, 'pglite', 'lock.pid'), '1')
  await t.rejects(openDatabase({ url: null, dataDir: dir }), DatabaseLockedError)
  // A lock left by a dead process is taken over.
  writeFileSync(join(dir, 'pglite', 'lock.pid'), '999999999')
  const db = await openDatabase({ url: null, dataDir: dir })
  await db.close()
})

t.test('a failed migration rolls back and stops with a clear error', async t => {
  const db = await testDatabase(t)
  const bad = [
    {
      version: 900,
      name: '900_broken.sql',
      checksum: 'x',
      sql: 'CREATE TABLE half_done (id int); SELECT no_such_function();'
    }
  ]
  await t.rejects(migrate(db, { migrations: bad }), MigrationError)
  await t.rejects(migrate(db, { migrations: bad }), /900_broken\.sql failed and was rolled back/)
  const table = await db.query("SELECT to_regclass('half_done') AS t")
  t.same(table.rows, [{ t: null }], 'nothing of the failed migration remains')
  const recorded = await db.query('SELECT version FROM schema_migrations WHERE version = 900')
  t.equal(recorded.rowCount, 0)
})

t.test('a new DATA_DIR is created by initdb in a child process, with the small settings', async t => {
  const dir = mkdtempSync(join(tmpdir(), 'ws-initdb-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  // What an interrupted first start could leave: a staging directory, files without PG_VERSION.
  mkdirSync(join(dir, 'pglite', 'base'), { recursive: true })
  writeFileSync(join(dir, 'pglite', 'base', 'half-written'), 'x')
  mkdirSync(join(dir, 'pglite.initdb'))
  // Child processes started while opening are counted (node:child_process's spawn is wrapped;
  // syncBuiltinESMExports makes client.ts's import see it), with how each one ended.
  const script = `
    const { createRequire, syncBuiltinESMExports } = await import('node:module')
    const { readFileSync } = await import('node:fs')
    const cp = createRequire(import.meta.url)('node:child_process')
    const spawn = cp.spawn
    const children = []
    cp.spawn = (...args) => { const c = spawn(...args); c.once('exit', code => { children.push(code) }); return c }
    syncBuiltinESMExports()
    const { openDatabase } = await import(${JSON.stringify(new URL('../../src/db/client.ts', import.meta.url).href)})
    const db = await openDatabase({ url: null, dataDir: ${JSON.stringify(dir)} })
    const r = await db.query("SELECT 41 + 1 AS answer, current_setting('shared_buffers') AS \\"sharedBuffers\\"")
    const hwmMb = Math.round(Number(readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\\s+(\\d+)/)[1]) / 1024)
    await db.close()
    console.log(JSON.stringify({ ...r.rows[0], hwmMb, children }))`
  const file = join(dir, 'open.mjs')
  writeFileSync(file, script)
  const r = spawnSync(process.execPath, [...tsImport, file], { cwd: projectRoot, encoding: 'utf8', timeout: 120_000 })
  t.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as {
    answer?: number, sharedBuffers?: string, hwmMb?: number, children?: number[]
  }
  t.equal(out.answer, 42)
  t.same(out.children, [0], 'initdb ran to the end in one child process')
  t.equal(out.sharedBuffers, '16MB', 'the embedded settings are in effect')
  // initdb in this process peaks at ≈ 650 MB (measured on Node 20); opening the finished
  // directory, through the tests' TypeScript loader, at ≈ 300 MB.
  t.ok((out.hwmMb ?? Infinity) < 450, `initdb's memory was never this process's (peak ${out.hwmMb} MB)`)
  t.ok(existsSync(join(dir, 'pglite', 'PG_VERSION')), 'the cluster is on disk')
  t.notOk(existsSync(join(dir, 'pglite', 'base', 'half-written')), 'what an interrupted start left is gone')
  t.notOk(existsSync(join(dir, 'pglite.initdb')), 'so is the staging directory')
})

t.test('a loop of transactions lets timers and sockets in between them', async t => {
  // PGlite runs PostgreSQL in this thread: without a turn of the event loop between
  // transactions, a batch loop (the expiry sweep) starved every request until it ended.
  const db = await testDatabase(t)
  let ticks = 0
  const timer = setInterval(() => { ticks++ }, 1)
  t.teardown(() => { clearInterval(timer) })
  for (let i = 0; i < 300; i++) await db.transaction(async tx => { await tx.query('SELECT 1') })
  t.ok(ticks > 0, `a 1 ms timer ran ${ticks} times during 300 transactions`)
})

t.test('an edited, already-applied migration is refused', async t => {
  const db = await testDatabase(t)
  const [first] = loadMigrations()
  await t.rejects(migrate(db, { migrations: [{ ...first!, checksum: 'changed' }] }), /changed after it was applied/)
})

t.test('health reports 503 (ErrorResponse-compatible) when the embedded database is gone', async t => {
  const h = await build(t)
  await h.db.close()
  const res = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(res.statusCode, 503)
  t.match(
    res.json(), { code: 'SERVICE_UNAVAILABLE', status: 'unavailable', checks: { database: { status: 'unavailable' } } }
  )
  t.notMatch(res.body, /closed|Error|stack/i, 'no internal error text')
  assertContract(t, 'GET', '/api/health', res)
})

t.test('a successful database check answers /api/health for HEALTH_CACHE_MS; a failed one is never reused', async t => {
  const real = await testDatabase(t)
  let pings = 0
  let failNext = false
  // The real database, with a count of pings and a switch that makes the next ones fail.
  const db: typeof real = {
    ...real,
    async ping () {
      pings++
      if (failNext) {
        await new Promise(resolve => setTimeout(resolve, 20)) // a refusal takes a round trip too
        throw new Error('connection refused')
      }
      await real.ping()
    }
  }
  const h = await build(t, { db, env: { HEALTH_CACHE_MS: '60000' } })
  const health = async () => await h.inject({ method: 'GET', url: '/api/health' })

  const first = await health()
  t.equal(first.statusCode, 200)
  const burst = await Promise.all(Array.from({ length: 20 }, health))
  t.same(burst.map(r => r.statusCode), Array(20).fill(200))
  t.equal(pings, 1, '21 checks, one ping: the success is reused')
  t.equal(
    burst[0]?.json().checks.database.latencyMs, first.json().checks.database.latencyMs,
    'the reused answer reports the latency of the ping it is based on'
  )

  const h0 = await build(t, { db, env: { HEALTH_CACHE_MS: '0' } })
  failNext = true
  const failed = await Promise.all(
    Array.from({ length: 5 }, async () => await h0.inject({ method: 'GET', url: '/api/health' }))
  )
  t.same(failed.map(r => r.statusCode), Array(5).fill(503))
  t.equal(pings, 2, 'concurrent checks share one ping, even a failing one')
  const again = await h0.inject({ method: 'GET', url: '/api/health' })
  t.equal(again.statusCode, 503)
  t.equal(pings, 3, 'a failure is not reused: the next check pings again')
  failNext = false
  t.equal(
    (await h0.inject({ method: 'GET', url: '/api/health' })).statusCode, 200,
    'and the first ping that succeeds answers 200'
  )
  assertContract(t, 'GET', '/api/health', again)
})

t.test('PostgreSQL: two concurrent migrators leave the database migrated once', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
}, async t => {
  const url = TEST_DATABASE_URL as string
  const schema = `t_mig_${randomBytes(5).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  t.teardown(async () => { await admin.query(`DROP SCHEMA ${schema} CASCADE`); await admin.end() })
  const a = await openDatabase({ url, dataDir: null, schema })
  const b = await openDatabase({ url, dataDir: null, schema })
  t.teardown(async () => { await a.close(); await b.close() })
  const [ra, rb] = await Promise.all([migrate(a), migrate(b)])
  const names = loadMigrations().map(m => m.name)
  t.same([...ra, ...rb].sort(), names.sort(), 'each migration applied by exactly one of the two')
  const rows = await a.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')
  t.equal(rows.rows[0]?.n, names.length)
})

t.test('PostgreSQL: the service recovers by itself when the database comes back', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
}, async t => {
  // A database of its own, migrated, then an app whose pool reaches it through the proxy.
  const direct = await testDatabase(t)
  const target = new URL(direct.url as string)
  const proxy = await startTcpProxy(t, { host: target.hostname, port: Number(target.port || 5432) })
  const viaProxy = new URL(target.href)
  viaProxy.hostname = '127.0.0.1'
  viaProxy.port = String(proxy.port)
  const db = await openDatabase({ url: viaProxy.href, dataDir: null, onError: () => {} })
  t.teardown(async () => { await db.close() })
  // Every health check pings (no reuse of a successful check), so each one sees the outage.
  const h = await build(t, { db, env: { HEALTH_CACHE_MS: '0' } })

  const ok = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(ok.statusCode, 200)

  proxy.down() // every backend connection cut, new ones refused
  const down = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(down.statusCode, 503)
  assertContract(t, 'GET', '/api/health', down)

  proxy.up()
  // The pool dropped the cut connections while the database was away; the first check after
  // it is back opens a new one.
  const back = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(back.statusCode, 200, 'healthy again without a restart, from the first request on')
  const after = await Promise.all(
    Array.from({ length: 10 }, async () => (await h.inject({ method: 'GET', url: '/api/health' })).statusCode)
  )
  t.same(after, Array(10).fill(200), 'the following requests all succeed')
})

t.test('PostgreSQL: terminated backends are replaced by the pool', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
}, async t => {
  // The app's pool reports each idle client whose backend goes away (onError), so the test can
  // wait for exactly those reports instead of a guessed delay.
  const reported: Array<() => void> = []
  let errors = 0
  const db = await testDatabase(t, { onError: () => { errors++; for (const f of reported.splice(0)) f() } })
  const h = await build(t, { db, env: { HEALTH_CACHE_MS: '0' } })
  const first = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(first.statusCode, 200)
  // In the test's own database, our pool's backends are every client but this one and the job
  // engine's LISTEN connection (named apart: src/db/client.ts).
  const admin = new pg.Client({ connectionString: db.url as string })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const killed = await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE pid <> pg_backend_pid() AND datname = current_database() AND backend_type = 'client backend'
        AND application_name NOT LIKE '%:listen'`)
  t.ok((killed.rowCount ?? 0) >= 1, 'at least one backend of this app was terminated')
  const count = killed.rowCount ?? 0
  await new Promise<void>(resolve => {
    const check = (): void => { if (errors >= count) resolve(); else reported.push(check) }
    check()
  })
  t.equal(errors, count, 'the pool saw each terminated backend go')
  let ok = 0
  for (let i = 0; i < 10; i++) if ((await h.inject({ method: 'GET', url: '/api/health' })).statusCode === 200) ok++
  t.ok(ok >= 9, `the next requests succeed (${ok}/10)`)
})

t.test('PostgreSQL: a backend lost between two statements of a transaction fails that transaction, not the process', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL not set' : false
}, async t => {
  // Seen under load: idle_in_transaction_session_timeout ended a session while its transaction
  // waited, pg emitted 'error' on the checked-out client (the pool listens only to idle ones),
  // and the uncaught exception ended the process. The report through onError is the signal the
  // test waits for: the server's message has arrived before the next statement is sent.
  const reported: Error[] = []
  let onReport = (): void => {}
  const db = await testDatabase(t, { onError: err => { reported.push(err); onReport() } })
  const admin = new pg.Client({ connectionString: db.url as string })
  await admin.connect()
  t.teardown(async () => { await admin.end() })
  const failed = await db.transaction(async tx => {
    const pid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid
    await new Promise<void>(resolve => {
      onReport = resolve
      admin.query('SELECT pg_terminate_backend($1)', [pid]).catch(() => {})
    })
    await tx.query('SELECT 1')
    return 'committed'
  }).then(() => null, (err: unknown) => err)
  t.match(reported[0], { code: '57P01' }, 'the lost connection was reported, not thrown')
  t.ok(isDatabaseUnavailable(failed), `the transaction failed as "database unavailable" (${String(failed)})`)
  const after = await db.query<{ one: number }>('SELECT 1 AS one')
  t.equal(after.rows[0]?.one, 1, 'the pool serves the next query on a new connection')
})

t.test('APP_ENV=production refuses an in-memory database and a missing secret', async t => {
  t.throws(
    () => testConfig({ APP_ENV: 'production', PUBLIC_URL: 'https://x.example', SESSION_SECRET: 's'.repeat(32) }),
    /DATABASE_URL is required when APP_ENV=production/
  )
  t.throws(
    () => testConfig({ APP_ENV: 'production', PUBLIC_URL: 'https://x.example', DATABASE_URL: 'postgres://db/x' }),
    /SESSION_SECRET .* is required/
  )
})

// test/helpers/pglite-reuse.ts: an embedded test database given back is handed to the next test
// of the process only as the template was: no rows of the last test, its session settings gone,
// the template's own rows there; after DDL or an open transaction it is closed instead.
t.test('a test database is handed on only as the template was', { skip: TEST_DATABASE_URL !== null && 'PGlite only (PostgreSQL copies a database per test)' }, async t => {
  let first: Awaited<ReturnType<typeof testDatabase>> | undefined
  let migrations = 0
  await t.test('a test that writes rows and changes a setting', async t => {
    const h = await build(t)
    first = h.db
    await h.signIn()
    await h.db.exec("SET timezone = 'Asia/Tokyo'")
    migrations = (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM schema_migrations')).rows[0]?.n ?? 0
    t.ok(migrations > 0)
  })
  await t.test('the next one gets the same database, as the template was', async t => {
    const db = await testDatabase(t)
    t.equal(db, first, 'handed on, not opened again')
    t.same((await db.query('SELECT count(*)::int AS n FROM users')).rows, [{ n: 0 }], 'no rows of the last test')
    t.same((await db.query('SELECT count(*)::int AS n FROM workspaces')).rows, [{ n: 0 }])
    t.same((await db.query('SHOW timezone')).rows, [{ TimeZone: 'UTC' }], 'its session settings reset')
    t.same((await db.query('SELECT count(*)::int AS n FROM schema_migrations')).rows, [{ n: migrations }], 'the template\'s rows kept')
    await db.exec('CREATE TABLE left_behind (x int)')
  })
  await t.test('after DDL, a new database', async t => {
    const db = await testDatabase(t)
    t.not(db, first, 'the changed one was closed')
    t.same((await db.query("SELECT to_regclass('left_behind') AS r")).rows, [{ r: null }])
    first = db
    await db.exec('BEGIN')
  })
  await t.test('after a transaction left open, a new database', async t => {
    const db = await testDatabase(t)
    t.not(db, first)
    t.same((await db.query('SELECT count(*)::int AS n FROM users')).rows, [{ n: 0 }])
  })
})
