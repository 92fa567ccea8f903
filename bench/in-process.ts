import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { projectRoot } from '../src/paths.js'
import { tempDir } from './servers.js'

/**
 * The service's app in this process on `databaseUrl` (migrated), for `fn` to prepare a bench's data
 * with the service's own services before the measure; closed after.
 */
export async function withServiceApp<T> (databaseUrl: string, fn: (app: FastifyInstance) => Promise<T>): Promise<T> {
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    DATA_DIR: tempDir('bench-in-process-'),
    DATABASE_URL: databaseUrl
  }, { root: projectRoot })
  const app = await buildApp({ config, logger: false })
  await app.ready()
  try {
    return await fn(app)
  } finally {
    await app.close()
  }
}
