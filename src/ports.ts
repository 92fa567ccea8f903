import type { Config } from './config.js'
import type { Clock } from './clock.js'
import type { Database } from './db/client.js'
import type { Mailer } from './mail/mailer.js'
import type { Logger } from './logger.js'
import type { SessionTokenSigner } from './sessions/service.js'
import type { InvitationBudget } from './invitations/budget.js'
import type { InviterNoticeListener } from './invitations/inviter-notice.js'
import type { Meter } from './lib/telemetry.js'

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
  /** Told when an invitation is accepted or its delivery failed (src/invitations/inviter-notice.ts). */
  inviterNotices?: InviterNoticeListener
  /** Counts for the operators' metrics (a no-op without METRICS_PORT). */
  meter: Meter
}
