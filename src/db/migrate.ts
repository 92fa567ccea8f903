import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Database, Queryable } from './client.js'
import { migrationsDir } from '../paths.js'
import { isPublicSuffix, publicSuffixReason } from '../lib/public-suffix.js'
import { failPublicSuffixDomains } from './domains.js'

export interface Migration {
  version: number
  name: string
  sql: string
  checksum: string
  /** What the migration does in code, after its SQL and in its transaction (STEPS). */
  step?: (tx: Queryable) => Promise<void>
}

// The few migrations whose data change needs what SQL does not have: by version.
const STEPS: Readonly<Record<number, (tx: Queryable) => Promise<void>>> = {
  // Public suffixes from the maintained list (tldts), not a copy of it frozen in SQL.
  36: async tx => { await failPublicSuffixDomains(tx, isPublicSuffix, publicSuffixReason) }
}

// Any constant works; it only has to be the same for every instance of this service.
const MIGRATION_LOCK_ID = 72_001_417

export function loadMigrations (dir = migrationsDir): Migration[] {
  return readdirSync(dir)
    .filter(f => /^\d+_[\w-]+\.sql$/.test(f))
    .sort()
    .map(f => {
      const sql = readFileSync(join(dir, f), 'utf8')
      const version = Number(f.slice(0, f.indexOf('_')))
      const step = STEPS[version]
      return {
        version,
        name: f,
        sql,
        checksum: createHash('sha256').update(sql).digest('hex'),
        ...(step !== undefined ? { step } : {})
      }
    })
}

export class MigrationError extends Error {
  override name = 'MigrationError'
}

/**
 * Applies pending migrations, each in its own transaction. A transaction-scoped advisory lock
 * serialises concurrent migrators (several instances starting at once): the second waits, then
 * sees the versions the first applied and does nothing. A failed migration rolls back and throws.
 */
export async function migrate (
  db: Database,
  opts: { migrations?: Migration[], log?: (msg: string) => void } = {}
): Promise<string[]> {
  const migrations = opts.migrations ?? loadMigrations()
  const applied: string[] = []
  // Under the same lock as the migrations: two migrators creating the table at once would race
  // on the catalog (a unique violation, or "type schema_migrations already exists").
  await db.transaction(async tx => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID])
    await tx.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now())`)
  })
  for (const m of migrations) {
    await db.transaction(async tx => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID])
      // A migration's commit need not wait for its WAL to reach the disk: if the server crashes
      // first, the migration and its schema_migrations row are lost together, and the next start
      // applies it again. Thirty-odd commits no longer wait for thirty-odd disk flushes.
      await tx.query('SET LOCAL synchronous_commit TO off')
      const done = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1', [m.version]
      )
      const row = done.rows[0]
      if (row !== undefined) {
        if (row.checksum !== m.checksum) {
          throw new MigrationError(
            `Migration ${m.name} was changed after it was applied (checksum mismatch); add a new migration instead`
          )
        }
        return
      }
      try {
        await tx.exec(m.sql)
        await m.step?.(tx)
      } catch (err) {
        throw new MigrationError(`Migration ${m.name} failed and was rolled back: ${(err as Error).message}`)
      }
      await tx.query(
        'INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [m.version, m.name, m.checksum]
      )
      applied.push(m.name)
      opts.log?.(`applied migration ${m.name}`)
    })
  }
  return applied
}
