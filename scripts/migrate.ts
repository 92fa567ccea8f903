// Applies pending migrations to the configured database (DATABASE_URL, or the embedded one in
// DATA_DIR) and exits. The service also migrates at start-up; this is for deploy pipelines.
import { ConfigError, loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/client.js'
import { migrate } from '../src/db/migrate.js'
import { projectRoot } from '../src/paths.js'

try {
  const config = loadConfig(process.env, { root: projectRoot })
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  try {
    const applied = await migrate(db, { log: msg => { console.log(msg) } })
    console.log(applied.length === 0
      ? `database is up to date (${db.kind})`
      : `applied ${applied.length} migration(s) (${db.kind})`)
  } finally {
    await db.close()
  }
} catch (err) {
  // A failing script exits non-zero, with one line that says why.
  console.error(err instanceof ConfigError ? err.message : `migrate failed: ${(err as Error).message}`)
  process.exit(1)
}
