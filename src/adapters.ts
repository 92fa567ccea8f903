import type { FastifyInstance } from 'fastify'
import type { Config } from './config.js'
import { StartupError } from './config/error.js'
import {
  DatabaseLockedError, DatabaseUnavailableError, isDatabaseUnavailable, openDatabase, type Database
} from './db/client.js'
import { migrate } from './db/migrate.js'
import { createMailer, type Mailer } from './mail/mailer.js'

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

// SQLSTATEs a person fixes in DATABASE_URL: no such database, wrong password or user.
const URL_PROBLEMS: Record<string, string> = {
  '3D000': 'does not exist on that server',
  '28P01': 'refused the password',
  28000: 'refused the user'
}

/**
 * A database that cannot be opened, as the setting to change: DATABASE_URL (shown without its
 * password) or DATA_DIR. Anything else (a failed migration, a fault of ours) goes on unchanged.
 */
function explained (err: unknown, config: Config): unknown {
  if (err instanceof DatabaseLockedError) {
    return new StartupError('DATA_DIR', err.message.replace(/\. Stop it.*$/, ''),
      'stop that process, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server', { cause: err })
  }
  if (config.databaseUrl === null) return err
  const url = new URL(config.databaseUrl)
  url.password = ''
  const where = `${url.hostname}:${url.port !== '' ? url.port : '5432'}`
  const fix = 'start PostgreSQL there or correct DATABASE_URL (postgres://user:password@host:port/database)'
  const code = (err as { code?: string }).code ?? ''
  const problem = URL_PROBLEMS[code]
  if (problem !== undefined) {
    const db = url.pathname.slice(1)
    return new StartupError('DATABASE_URL', `the database ${db} at ${where} ${problem}`, fix, { cause: err })
  }
  if (!isDatabaseUnavailable(err)) return err
  const cause = (err instanceof DatabaseUnavailableError ? err.cause : err) as { code?: string, message?: string }
  const reason = cause.code === 'ECONNREFUSED'
    ? 'connection refused'
    : cause.code === 'ENOTFOUND' || cause.code === 'EAI_AGAIN'
      ? 'no such host'
      : (cause.code ?? cause.message ?? 'no answer')
  return new StartupError('DATABASE_URL', `cannot reach PostgreSQL at ${where} (${reason})`, fix, { cause: err })
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
