import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { buildApp } from '../../src/app.js'
import { seededDataDir, testConfig, testDatabase, TEST_DATABASE_URL } from '../helpers/build.js'
import { assertWorkspaceServed, makeWorkspaceContent } from '../helpers/workspace-content.js'

// The backup runbook of docs/operating.md ("Backup and restore"), step by step: a workspace with
// members, invitations, an API key and a webhook endpoint is backed up, restored into a fresh
// directory or database, and served by a service started on it. Embedded: the DATA_DIR of a
// stopped service, archived with tar. PostgreSQL: pg_dump while the service runs, pg_restore into
// a new database.

t.setTimeout(240_000)

function run (t: Test, cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 120_000 })
  t.equal(r.status, 0, `${cmd} ${args.join(' ')}${r.stderr !== '' ? `: ${r.stderr}` : ''}`)
}

const tempDir = (t: Test, prefix: string): string => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

t.test('embedded: the stopped DATA_DIR archived, restored into a fresh directory, served', async t => {
  const dataDir = await seededDataDir(t, 'ws-backup-')
  const first = await buildApp({ config: testConfig({ DATA_DIR: dataDir }), logger: false })
  const content = await makeWorkspaceContent(first)
  await first.close() // the service stopped: nothing writes the directory now

  const backups = tempDir(t, 'ws-backups-')
  const archive = join(backups, 'data.tar.gz')
  run(t, 'tar', ['-C', dataDir, '-czf', archive, '.'])

  const restored = tempDir(t, 'ws-restored-')
  run(t, 'tar', ['-C', restored, '-xzf', archive])
  const again = await buildApp({ config: testConfig({ DATA_DIR: restored }), logger: false })
  t.teardown(async () => { await again.close() })
  await assertWorkspaceServed(t, again, content)
})

t.test('PostgreSQL: pg_dump of the running service, pg_restore into a new database, served', {
  skip: TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL is not set' : false
}, async t => {
  const env = { SESSION_SECRET: randomBytes(32).toString('base64url') }
  const db = await testDatabase(t) as { url: string } & Awaited<ReturnType<typeof testDatabase>>
  const first = await buildApp({ config: testConfig(env), db, logger: false })
  t.teardown(async () => { await first.close() })
  const content = await makeWorkspaceContent(first)

  // Online: the service keeps running (and answering) while pg_dump takes its snapshot.
  const archive = join(tempDir(t, 'ws-pgdump-'), 'workspace.dump')
  run(t, 'pg_dump', ['--format=custom', `--file=${archive}`, db.url])
  t.equal((await first.inject({ method: 'GET', url: '/api/health' })).statusCode, 200, 'served throughout')

  const name = `${new URL(db.url).pathname.slice(1)}_restored`
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string })
  await admin.connect()
  await admin.query(`CREATE DATABASE "${name}"`)
  t.teardown(async () => {
    const c = new pg.Client({ connectionString: TEST_DATABASE_URL as string })
    await c.connect()
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)
    await c.end()
  })
  await admin.end()
  const restoredUrl = new URL(db.url)
  restoredUrl.pathname = `/${name}`
  run(t, 'pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', `--dbname=${restoredUrl.href}`, archive])

  const again = await buildApp({ config: testConfig({ ...env, DATABASE_URL: restoredUrl.href }), logger: false })
  t.teardown(async () => { await again.close() })
  await assertWorkspaceServed(t, again, content)
})
