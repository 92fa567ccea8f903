import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../../src/app.js'
import { FakeClock } from '../../src/clock.js'
import { loadMigrations } from '../../src/db/migrate.js'
import { projectRoot } from '../../src/paths.js'
import { testConfig } from '../helpers/build.js'
import { tsImport } from '../helpers/service-process.js'
import { assertWorkspaceServed, type WorkspaceContent } from '../helpers/workspace-content.js'

// An upgrade, as an embedded installation meets it: the DATA_DIR an earlier version left
// (test/fixtures/upgrade/, made by npm run fixture:upgrade: a first start on an empty directory
// and a workspace with members, invitations, an API key and a webhook endpoint, then stopped) is
// started on this code. It applies the migrations written since — forward only, each once — and
// serves what was there. docs/operating.md, "Upgrades and rolling back".
// The service runs on a clock set to when the fixture was made (manifest.madeAt): its admin's
// session and its invitations have lifetimes of days, and a test must not depend on today's date.

t.setTimeout(240_000)

const fixtures = join(projectRoot, 'test/fixtures/upgrade')
const manifest = JSON.parse(readFileSync(join(fixtures, 'manifest.json'), 'utf8')) as {
  archive: string, commit: string, madeAt: string, migrations: string[], content: WorkspaceContent
}

t.test(`a DATA_DIR made by ${manifest.commit} starts on this code and serves its workspace`, async t => {
  const dataDir = mkdtempSync(join(tmpdir(), 'ws-upgrade-'))
  t.teardown(() => { rmSync(dataDir, { recursive: true, force: true }) })
  const untar = spawnSync('tar', ['-C', dataDir, '-xJf', join(fixtures, manifest.archive)], { encoding: 'utf8' })
  t.equal(untar.status, 0, `the archive unpacks ${untar.stderr}`)

  const current = loadMigrations().map(m => m.name)
  t.same(current.slice(0, manifest.migrations.length), manifest.migrations,
    'the fixture\'s migrations are the first of today\'s: none was changed or removed since')

  const clock = new FakeClock(new Date(manifest.madeAt))
  const app = await buildApp({ config: testConfig({ DATA_DIR: dataDir }), logger: false, clock })
  const applied = await app.db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version')
  t.same(applied.rows.map(r => r.name), current, `every migration is applied (${current.length - manifest.migrations.length} on this start)`)
  await assertWorkspaceServed(t, app, manifest.content)
  await app.close()

  // A script of the same installation runs on it too, with the service stopped.
  const reencrypt = spawnSync(process.execPath, [...tsImport, 'scripts/reencrypt.ts'], {
    cwd: projectRoot, encoding: 'utf8', timeout: 120_000, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }
  })
  t.equal(reencrypt.status, 0, reencrypt.stderr)
  t.match(reencrypt.stdout, /webhook signing secrets: 0 re-encrypted, 1 already current, 0 unreadable/,
    'npm run secrets:reencrypt finds the endpoint\'s secret current (nothing rotated)')
})
