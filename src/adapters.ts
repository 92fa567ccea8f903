import type { FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { openDatabase, type Database } from './db/client.js'
import { migrate } from './db/migrate.js'
import { createMailer, type Mailer } from './mail/mailer.js'

// The real adapters of the Database and Mailer ports, opened for an app and closed with it. A
// test's own (opts.db, opts.mailer) is used as given: whoever made it closes it.

/** The configured database (PGlite or PostgreSQL), migrated; or the one given. */
export async function openAppDatabase (app: FastifyInstance, config: Config, given?: Database): Promise<Database> {
  if (given !== undefined) return given
  const db = await openDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.databasePoolMax,
    ...config.databaseTimeouts,
    onError: err => { app.log.warn({ err: err.message }, 'database connection lost; the pool will reconnect') }
  })
  app.addHook('onClose', async () => { await db.close() })
  await migrate(db, { log: msg => { app.log.info(msg) } })
  return db
}

/** The configured mailer (SMTP, or the dev mailbox); or the one given. */
export function openAppMailer (app: FastifyInstance, config: Config, given?: Mailer): Mailer {
  if (given !== undefined) return given
  const mailer = createMailer({
    smtpUrl: config.smtp.url,
    from: config.smtp.from,
    timeoutMs: config.smtp.timeoutMs,
    dataDir: config.dataDir,
    log: app.log
  })
  app.addHook('onClose', async () => { await mailer.close() })
  return mailer
}
