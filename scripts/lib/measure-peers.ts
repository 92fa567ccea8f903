import { randomBytes } from 'node:crypto'
import { SMTPServer } from 'smtp-server'
import pg from 'pg'
import { openDatabase, type Database } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { projectRoot } from '../../src/paths.js'

// The peers of the measuring scripts: an SMTP server on loopback that accepts and discards
// (counting), like a relay that answers quickly; and a migrated database — PGlite in memory (or on
// disk), or a throwaway schema on a PostgreSQL server, dropped by `close`.

export async function startSinkSmtp (): Promise<{ url: string, received: () => number, close: () => Promise<void> }> {
  let received = 0
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData (stream, _session, cb) { stream.on('data', () => {}); stream.on('end', () => { received++; cb() }) }
  })
  // A client that gives up mid-session (the service's send deadline under load) makes the reply
  // fail with EPIPE or ECONNRESET; without a listener that 'error' would end the measuring process.
  smtp.on('error', () => {})
  await new Promise<void>(resolve => { smtp.listen(0, '127.0.0.1', () => { resolve() }) })
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`,
    received: () => received,
    close: async () => { await new Promise<void>(resolve => { smtp.close(() => { resolve() }) }) }
  }
}

async function openMeasureDatabase (
  kind: 'pglite' | 'postgres',
  url: string,
  dataDir: string | null = null
): Promise<{ db: Database, close: () => Promise<void> }> {
  if (kind === 'pglite') {
    const db = await openDatabase({ url: null, dataDir })
    await migrate(db)
    return { db, close: async () => { await db.close() } }
  }
  const schema = `measure_${randomBytes(4).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE SCHEMA ${schema}`)
  await admin.end()
  const db = await openDatabase({ url, dataDir: null, schema })
  await migrate(db)
  return {
    db,
    close: async () => {
      await db.close()
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(`DROP SCHEMA ${schema} CASCADE`)
      await c.end()
    }
  }
}

/** The command-line options both measuring scripts take for their database. */
export const databaseOptions = {
  db: { type: 'string', default: 'pglite' },
  url: { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' }
} as const

/**
 * The app as production builds it, listening on loopback, over a migrated database and the
 * sink SMTP server, with one workspace to measure in. `env` adds the script's own settings.
 */
export async function startMeasuredApp (opts: {
  db: string,
  url: string,
  dataDir: string | null,
  env: Record<string, string>
}) {
  if (opts.db !== 'pglite' && opts.db !== 'postgres') throw new Error('--db must be pglite or postgres')
  const smtp = await startSinkSmtp()
  const { db, close: closeDatabase } = await openMeasureDatabase(opts.db, opts.url, opts.dataDir)
  const config = loadConfig(
    { LOG_LEVEL: 'silent', SMTP_URL: smtp.url, APP_URL: 'https://app.example.test', ...opts.env },
    { root: projectRoot, ephemeral: true }
  )
  const app = await buildApp({ config, db, logger: false })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`
  const ws = await insertWorkspace(db, { name: 'Measure', now: new Date() })
  const close = async (): Promise<void> => {
    await app.close()
    await closeDatabase()
    await smtp.close()
  }
  return { app, db, base, smtp, workspaceId: ws.id, close }
}
