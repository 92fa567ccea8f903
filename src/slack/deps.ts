import type { Keyring } from '../lib/crypto.js'
import type { Clock } from '../clock.js'
import type { Database } from '../db/client.js'
import type { Logger } from '../logger.js'
import type { Principal } from '../principal.js'
import type { Role } from '../db/users.js'
import type { InvitePolicy } from '../db/workspaces.js'
import type { InviteRequestRow, InviteRequestStatus } from '../db/invite-requests.js'
import type { components } from '../generated/openapi.js'
import type { SlackWebApi } from './web-api.js'
import type { EventOutbox } from '../ports/event-outbox.js'

// What the Slack app's handlers (bot.ts, interactions.ts, home.ts, notices.ts) are built from:
// the services they act through, declared here so the Slack code does not reach into them.

type InviteResult = components['schemas']['InviteUserResponse']
type InvitationView = components['schemas']['Invitation']
type InviteRequestView = components['schemas']['InviteRequest']

/** What the app needs from the invitations service (src/invitations/service.ts). */
export interface InvitationsPort {
  invite(actor: Principal, input: { email: string, role: Role }): Promise<InviteResult>
  list(actor: Principal, q: { status?: 'pending', limit: number }): Promise<{ items: InvitationView[] }>
  resend(actor: Principal, invitationId: string): Promise<InviteResult>
  revoke(actor: Principal, invitationId: string): Promise<InvitationView>
}

/** What the app needs from the invite-requests service (src/invite-requests/service.ts). */
export interface InviteRequestsPort {
  policyOf(workspaceId: string): Promise<InvitePolicy>
  request(actor: Principal, input: { email: string, role: Role }): Promise<{ row: InviteRequestRow, created: boolean }>
  list(actor: Principal, q: {
    status?: InviteRequestStatus,
    mine?: boolean,
    limit: number
  }): Promise<{ items: InviteRequestView[] }>
  find(actor: Principal, requestId: string): Promise<InviteRequestView | null>
  approve(actor: Principal, requestId: string, input: { role?: Role }): Promise<unknown>
  deny(actor: Principal, requestId: string, input: { reason?: string }): Promise<unknown>
}

/** What the app needs from the invite-links service (src/invite-links/service.ts). */
export interface InviteLinksPort {
  create(actor: Principal, input: { requiresApproval?: boolean }): Promise<{ url: string, expiresAt: string }>
}

export interface SlackBotDeps {
  db: Database
  clock: Clock
  log: Logger
  api: SlackWebApi
  invitations: InvitationsPort
  inviteRequests: InviteRequestsPort
  inviteLinks: InviteLinksPort
  /** Where the bot's audit events (and so catalogue events) are recorded. */
  events: EventOutbox
  /** The keys bot tokens are encrypted with; throws CHAT_PLATFORM_NOT_CONFIGURED without one. */
  requireKey(): Keyring
}
