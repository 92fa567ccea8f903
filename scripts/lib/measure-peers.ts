import { randomBytes } from 'node:crypto'
import { SMTPServer } from 'smtp-server'
import pg from 'pg'
import { openDatabase, type Database } from '../../src/db/client.js'
import { migrate } from '../../src/db/migrate.js'

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
  await new Promise<void>(resolve => { smtp.listen(0, '127.0.0.1', () => { resolve() }) })
  return {
    url: `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`,
    received: () => received,
    close: async () => { await new Promise<void>(resolve => { smtp.close(() => { resolve() }) }) }
  }
}

export async function openMeasureDatabase (
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
