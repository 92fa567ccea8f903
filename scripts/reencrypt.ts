// Re-encrypts what the database keeps sealed (stored Idempotency-Key answers, reminder links,
// webhook signing secrets, Slack bot tokens) under the current SESSION_SECRET / ENCRYPTION_KEY,
// opening each with the current or a previous one (SESSION_SECRET_PREVIOUS, ENCRYPTION_KEY_PREVIOUS).
// Run it with the service's own environment; on PostgreSQL while the service runs, on the embedded
// database with the service stopped (one process at a time). docs/operating.md, "Rotating secrets".
import { ConfigError, loadConfig } from '../src/config.js'
import { openDatabase } from '../src/db/client.js'
import { projectRoot } from '../src/paths.js'
import { reencryptStored } from '../src/housekeeping/reencrypt.js'

try {
  const config = loadConfig(process.env, { root: projectRoot })
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  try {
    let unreadable = 0
    for (const c of await reencryptStored({ db, config })) {
      console.log(`${c.store}: ${c.rewritten} re-encrypted, ${c.current} already current, ${c.unreadable} unreadable`)
      unreadable += c.unreadable
    }
    if (unreadable > 0) {
      console.log(`${unreadable} value(s) open with no configured key: they stay as they are, unreadable ` +
        '(is a previous secret missing from SESSION_SECRET_PREVIOUS / ENCRYPTION_KEY_PREVIOUS?)')
    }
  } finally {
    await db.close()
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : `secrets:reencrypt failed: ${(err as Error).message}`)
  process.exit(1)
}
