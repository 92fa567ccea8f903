import type { LookupFunction } from 'node:net'
import type { Config } from '../config.js'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Mailer } from './mailer.js'
import type { Logger } from '../logger.js'
import type { SessionTokenSigner } from './session-token-signer.js'
import type { InvitationBudget } from './invitation-budget.js'
import type { EventOutbox } from './event-outbox.js'
import type { JobEngine } from './job-engine.js'
import type { InviterNoticeListener } from './inviter-notices.js'
import type { Meter } from '../lib/telemetry.js'

/** DNS TXT lookups for domain verification: the records at a name, each as its strings; none: []. */
export interface Resolver {
  resolveTxt(hostname: string): Promise<string[][]>
}

/** What the services are built from: the ports with their real adapters. */
export interface Ports {
  config: Config
  db: Database
  clock: Clock
  mailer: Mailer
  log: Logger
  signer: SessionTokenSigner
  /** The per-workspace invitation-e-mail budget; the invitation service draws on it before sending. */
  invitationBudget: InvitationBudget
  /** The durable job queue (pg-boss on this database). */
  jobs: JobEngine
  /** Where every audit event, and so every event of the catalogue, is recorded (in the change's transaction). */
  events: EventOutbox
  /** Name resolution for outgoing webhooks (DNS; tests inject a resolver). */
  lookup: LookupFunction
  /** TXT lookups for domain verification (node:dns/promises on DNS_SERVERS; tests: a loopback DNS server). */
  resolver: Resolver
  /** Told when an invitation is accepted or its delivery failed (src/invitations/inviter-notice.ts). */
  inviterNotices?: InviterNoticeListener
  /** Counts for the operators' metrics (a no-op without METRICS_PORT). */
  meter: Meter
}
