import fp from 'fastify-plugin'
import { userInfo } from 'node:os'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { StartupError } from '../config/error.js'
import { DatabaseLockedError, openDatabase, type Database } from '../db/client.js'
import { databaseStartupCause } from '../db/startup-cause.js'
import { migrate } from '../db/migrate.js'
import { observeDatabase } from '../db/observed.js'
import { noopTracer, type Tracer } from '../lib/telemetry.js'

// The Database port's adapter for an app: opened (PGlite or PostgreSQL, as configured), migrated,
// decorated as `db`, closed last of all (its onClose hook is registered before every user's). A
// test's own database (opts.db) is used as given: whoever made it closes it.

declare module 'fastify' {
  interface FastifyInstance {
    db: Database
  }
}

/**
 * An adapter plugin's options: the configuration, a test's own adapter of the port instead of the
 * configured one (its maker closes it), and the tracer its spans go to (src/tracing.ts).
 */
export type AdapterOptions<Name extends string, Port> = { config: Config, tracer?: Tracer | undefined } &
  { [K in Name]?: Port | undefined }

async function databasePlugin (fastify: FastifyInstance, opts: AdapterOptions<'db', Database>): Promise<void> {
  const { config } = opts
  const db = opts.db ?? await openConfigured(fastify, config)
  // Statements are observed (a span each, failed ones counted) only when traces or metrics are on.
  const observed = opts.tracer !== undefined || config.metrics.port !== null
  const tracer = opts.tracer ?? noopTracer
  fastify.decorate('db', observed ? observeDatabase(db, { meter: fastify.meter, tracer }) : db)
}

async function openConfigured (fastify: FastifyInstance, config: Config): Promise<Database> {
  try {
    const db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      poolMax: config.databasePoolMax,
      ...config.databaseTimeouts,
      onError: err => { fastify.log.warn({ err: err.message }, 'database connection lost; the pool will reconnect') }
    })
    fastify.addHook('onClose', async () => { await db.close() })
    await migrate(db, { log: msg => { fastify.log.info(msg) } })
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

export default fp(databasePlugin, { name: 'database', fastify: '5.x', dependencies: ['metrics'] })
