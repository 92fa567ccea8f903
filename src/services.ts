import type { Config } from './config.js'
import type { Clock } from './clock.js'
import type { Database } from './db/client.js'
import type { Mailer } from './mail/mailer.js'
import type { Logger } from './logger.js'
import type { SecurityServices } from './plugins/auth.js'
import { serviceError } from './errors.js'
import { createSessionService, type SessionService, type SessionTokenSigner } from './sessions/service.js'

/** What the services are built from: the ports with their real adapters. */
export interface Ports {
  config: Config
  db: Database
  clock: Clock
  mailer: Mailer
  log: Logger
  signer: SessionTokenSigner
}

/** Plain functions over ports, shared by the REST handlers, the MCP tools and the Slack bot. */
export interface Services {
  readonly ports: Ports
  readonly sessions: SessionService
  readonly security: SecurityServices
  close(): Promise<void>
}

export function createServices (ports: Ports): Services {
  const sessions = createSessionService({ db: ports.db, clock: ports.clock, signer: ports.signer, ttlSeconds: ports.config.session.ttlSeconds })
  const security: SecurityServices = {
    authenticateSession: async token => await sessions.authenticate(token),
    authenticateApiKey: async () => null,
    verifySlackSignature: () => { throw serviceError('CHAT_PLATFORM_NOT_CONFIGURED') }
  }
  return {
    ports,
    sessions,
    security,
    async close () {}
  }
}
