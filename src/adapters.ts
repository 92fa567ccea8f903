import type { FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { StartupError } from './config/error.js'
import { userInfo } from 'node:os'
import { DatabaseLockedError, openDatabase, type Database } from './db/client.js'
import { databaseStartupCause } from './db/startup-cause.js'
import { migrate } from './db/migrate.js'
import { createMailer } from './mail/mailer.js'
import type { Mailer } from './ports/mailer.js'

// The real adapters of the Database and Mailer ports, opened for an app and closed with it. A
// test's own (opts.db, opts.mailer) is used as given: whoever made it closes it.

/** The configured database (PGlite or PostgreSQL), migrated; or the one given. */
export async function openAppDatabase (app: FastifyInstance, config: Config, given?: Database): Promise<Database> {
  if (given !== undefined) return given
  try {
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
  } catch (err) {
    throw explained(err, config)
  }
}

/**
 * A database that cannot be opened, as the setting to change: DATABASE_URL (shown without its
 * password) with what the server or the network said (src/db/startup-cause.ts), or DATA_DIR.
 * Anything else (a failed migration, a fault of ours) goes on unchanged.
 */
function explained (err: unknown, config: Config): unknown {
  if (err instanceof DatabaseLockedError) {
    return new StartupError('DATA_DIR', err.message.replace(/\. Stop it.*$/, ''),
      'stop that process, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server', { cause: err })
  }
  if (config.databaseUrl === null) return err
  const url = new URL(config.databaseUrl)
  // pg's defaults when the URL leaves them out: the user from PGUSER or the login, the database named as the user.
  const user = decodeURIComponent(url.username !== '' ? url.username : (process.env.PGUSER ?? userInfo().username))
  const cause = databaseStartupCause(err, {
    where: `${url.hostname}:${url.port !== '' ? url.port : '5432'}`,
    host: url.hostname,
    user,
    hasPassword: url.password !== '',
    database: url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : user,
    connectTimeoutMs: config.databaseTimeouts.connectTimeoutMs
  })
  return cause === null ? err : new StartupError('DATABASE_URL', cause.problem, cause.fix, { cause: err })
}

/** The configured mailer (SMTP, or the dev mailbox); or the one given. */
export function openAppMailer (app: FastifyInstance, config: Config, given?: Mailer): Mailer {
  if (given !== undefined) return given
  const mailer = createMailer({
    smtpUrl: config.smtp.url,
    from: config.smtp.from,
    timeoutMs: config.smtp.timeoutMs,
    poolConnections: config.smtp.poolConnections,
    dataDir: config.dataDir,
    log: app.log
  })
  app.addHook('onClose', async () => { await mailer.close() })
  return mailer
}
