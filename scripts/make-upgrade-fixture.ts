// Makes test/fixtures/upgrade/: the DATA_DIR of an embedded installation as this code leaves it —
// first start on an empty directory (initdb, migrations, the job engine's tables, a generated
// session secret), then a workspace with members, invitations, an API key and a webhook endpoint
// (test/helpers/workspace-content.ts) — stopped, archived with tar and xz, and what it holds in
// manifest.json. test/ops/upgrade.test.ts starts the current code on it. Run when a release
// changes what is on disk, and keep the older archives' tests: npm run fixture:upgrade
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { FakeClock } from '../src/clock.js'
import { loadMigrations } from '../src/db/migrate.js'
import { projectRoot } from '../src/paths.js'
import { makeWorkspaceContent } from '../test/helpers/workspace-content.js'

const out = join(projectRoot, 'test/fixtures/upgrade')
const dataDir = mkdtempSync(join(tmpdir(), 'ws-fixture-'))
try {
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, { root: projectRoot })
  // When it was made: the test serves it on a clock set to this (its sessions and invitations expire).
  const madeAt = new Date()
  const app = await buildApp({ config, logger: false, clock: new FakeClock(madeAt) })
  const content = await makeWorkspaceContent(app, 'Made before an upgrade')
  await app.close()
  // The dev mailbox's copies of the invitations: not the database's, and the archive stays small.
  rmSync(join(dataDir, 'mail'), { recursive: true, force: true })
  const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: projectRoot, encoding: 'utf8' }).trim()
  const name = `data-${new Date().toISOString().slice(0, 10)}-${commit}.tar.xz`
  mkdirSync(out, { recursive: true })
  // xz at its strongest: 16 MB of WAL segment and the catalogs pack to a tenth of their size.
  execFileSync('tar', ['-C', dataDir, '--use-compress-program=xz -9e', '-cf', join(out, name), '.'])
  const manifest = {
    archive: name,
    commit,
    madeAt: madeAt.toISOString(),
    node: process.version,
    pglite: (JSON.parse(
      readFileSync(join(projectRoot, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')
    ) as { version: string }).version,
    migrations: loadMigrations().map(m => m.name),
    content
  }
  writeFileSync(join(out, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n')
  console.log(`${name}: ${Math.round(statSync(join(out, name)).size / 1024)} kB`)
} finally {
  rmSync(dataDir, { recursive: true, force: true })
}
