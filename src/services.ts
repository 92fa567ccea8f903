import type { Ports } from './ports/index.js'
import type { SecurityServices } from './auth/security.js'
import { createSessionService, type SessionService } from './sessions/service.js'
import { createMemberService, type MemberService } from './members/service.js'
import { createAuditTrailService, type AuditTrailService } from './audit/trail.js'
import { createAuthService, type AuthService } from './auth/service.js'
import { createSetupService, type SetupService } from './auth/setup.js'
import { createInvitationService, type InvitationService } from './invitations/service.js'
import { createIdempotency } from './idempotency/idempotency.js'
import { createApiKeyService, type ApiKeyService } from './api-keys/service.js'
import { createSlackService, type SlackService } from './slack/service.js'
import { createEventFeed, type EventFeed } from './events/feed.js'
import { createWebhookEndpointService, type WebhookEndpointService } from './webhooks/endpoints.js'
import { createWebhookDelivery } from './webhooks/delivery.js'
import { createAddressPolicy } from './webhooks/address-policy.js'
import { webhookKeyring } from './webhooks/secrets.js'
import { expireInvitations } from './invitations/expiry.js'
import { queueDueReminders, sendReminder } from './invitations/reminders.js'
import { createInviteRequestService, type InviteRequestService } from './invite-requests/service.js'
import type { InviteRequestNotice } from './invite-requests/context.js'
import { createWorkspaceSettingsService, type WorkspaceSettingsService } from './workspaces/settings.js'
import { createWorkspaceSummaryService, type WorkspaceSummaryService } from './workspaces/summary.js'
import { createInviteLinkService, type InviteLinkService } from './invite-links/service.js'
import { createBounceService, type BounceService } from './bounces/service.js'
import { createDomainService, type DomainService } from './domains/service.js'
import { createHealthService, type HealthService } from './health/service.js'
import type { InviterNotice } from './ports/inviter-notices.js'
import { createAsyncRelay, createRelay } from './lib/relay.js'

// Idempotency-Keys are remembered this long (as Stripe does); after that a key may be used afresh.
const IDEMPOTENCY_RETENTION_MS = 86_400_000
import { createScimUserService, type ScimUserService } from './scim/users.js'
import { createScimGroupService, type ScimGroupService } from './scim/groups.js'

/** Plain functions over ports, shared by the REST handlers, the MCP tools and the Slack bot. */
export interface Services {
  readonly ports: Ports
  readonly sessions: SessionService
  readonly security: SecurityServices
  readonly members: MemberService
  readonly auditTrail: AuditTrailService
  readonly auth: AuthService
  /** First run: the one-time setup link and the /setup page's operation. */
  readonly setup: SetupService
  readonly invitations: InvitationService
  readonly apiKeys: ApiKeyService
  readonly slack: SlackService
  readonly events: EventFeed
  readonly webhooks: WebhookEndpointService
  /** Start the job workers: webhook deliveries, the invitation expiry and reminder schedules, reminder e-mails. */
  startWorkers(): Promise<void>
  readonly inviteRequests: InviteRequestService
  readonly workspaceSettings: WorkspaceSettingsService
  readonly workspace: WorkspaceSummaryService
  readonly inviteLinks: InviteLinkService
  /** Bounces of invitation e-mails: the provider's webhook and the DSN listener. */
  readonly bounces: BounceService
  /** Join by verified domain: the admins' domains and the join links. */
  readonly domains: DomainService
  /** What GET /api/health reads: the database's ping, the mail relay as last seen. */
  readonly health: HealthService
  /** SCIM 2.0 for company directories: Users and Groups under /scim/v2. */
  readonly scim: { readonly users: ScimUserService, readonly groups: ScimGroupService }
  close(): Promise<void>
}

export function createServices (given: Ports): Services {
  // Slack is built from the services that tell it things (inviters hear when their invitation is
  // accepted, could not be delivered, or bounced; admins hear of invite requests made through any
  // door): they tell these relays, which Slack listens to once it is built (below). Every name
  // here refers to one declared above it: no closure waits for a later constant.
  const inviterNotices = createRelay<InviterNotice>()
  const requestNotices = createRelay<InviteRequestNotice>()
  const notifyRequest = requestNotices.tell
  const requestDigests = createAsyncRelay<Parameters<SlackService['tellAdminDigest']>[0]>()
  const ports: Ports = { ...given, inviterNotices: inviterNotices.tell }
  const sessions = createSessionService(ports)
  const apiKeys = createApiKeyService(ports)
  const domains = createDomainService({ ...ports, sessions, notifyRequest })
  // An address with no account that asks for a sign-in link may be offered to join by its domain.
  const auth = createAuthService({
    ...ports, sessions, unknownAddress: async (email, browser) => { await domains.offerJoin(email, browser) }
  })
  const idempotency = createIdempotency({ ...ports, retentionMs: IDEMPOTENCY_RETENTION_MS })
  const invitations = createInvitationService({ ...ports, idempotency })
  const inviteRequests = createInviteRequestService({
    ...ports, invitations, notify: notifyRequest, tellInSlack: requestDigests.tell
  })
  const inviteLinks = createInviteLinkService({ ...ports, sessions, notifyRequest })
  const slack = createSlackService({ ...ports, invitations, inviteRequests, inviteLinks })
  inviterNotices.listen(notice => { slack.noticeInviter(notice) })
  requestNotices.listen(notice => { slack.noticeRequest(notice) })
  requestDigests.listen(async notice => { await slack.tellAdminDigest(notice) })
  const security: SecurityServices = {
    authenticateSession: async token => await sessions.authenticate(token),
    sessionTokenVerifies: token => sessions.sessionIdOf(token) !== null,
    authenticateApiKey: async key => await apiKeys.authenticate(key),
    verifySlackSignature: request => { slack.verifySignature(request) }
  }
  // Signing secrets are encrypted with ENCRYPTION_KEY, or else a key derived from SESSION_SECRET.
  const webhookKey = webhookKeyring(ports.config)
  // A member the directory creates gets a sign-in link when the workspace asks for a welcome e-mail.
  const scimDeps = { ...ports, welcome: (email: string) => { auth.requestLoginLink(email, null) } }
  const policy = createAddressPolicy({
    allowPrivate: ports.config.webhooks.allowPrivateAddresses, resolve: ports.lookup
  })
  const delivery = createWebhookDelivery({ ...ports, key: webhookKey, policy })
  return {
    ports,
    sessions,
    security,
    members: createMemberService(ports),
    auditTrail: createAuditTrailService(ports),
    auth,
    setup: createSetupService({ ...ports, sessions }),
    invitations,
    apiKeys,
    slack,
    events: createEventFeed(ports),
    webhooks: createWebhookEndpointService({ ...ports, key: webhookKey, policy }),
    async startWorkers () {
      await ports.jobs.work('webhook-delivery', async data => { await delivery.attempt(data) })
      await ports.jobs.work('invitation-expiry', async () => {
        await expireInvitations(ports)
      })
      await ports.jobs.schedule('invitation-expiry', '* * * * *')
      // Reminders: the sweep claims the due ones each minute; each e-mail is a job of its own.
      await ports.jobs.work('invitation-reminder', async data => { await sendReminder(ports, data) })
      await ports.jobs.work('invitation-reminders', async () => { await queueDueReminders(ports) })
      await ports.jobs.schedule('invitation-reminders', '* * * * *')
      await ports.jobs.work('domain-verification', async () => { await domains.recheck() })
      await ports.jobs.schedule('domain-verification', '*/10 * * * *')
      // Chunks of a batch in flight at once: enough that the SMTP pool always has e-mails waiting
      // while other chunks are fetched, claimed and recorded (a few statements each, slow on a busy
      // machine) — one per four SMTP connections, at least two, at most eight.
      const chunkWorkers = Math.min(8, Math.max(2, Math.ceil(ports.config.smtp.poolConnections / 4)))
      await ports.jobs.work(
        'invitation-batch', async data => { await invitations.deliverBatchChunk(data) }, { workers: chunkWorkers }
      )
      await ports.jobs.work('invitation-batch-abandoned', async data => { await invitations.abandonBatchChunk(data) })
      // Admins hear of invite requests at most once an hour: the digests are swept each minute.
      await ports.jobs.work('admin-notice', async data => { await inviteRequests.sendNotice(data) })
      await ports.jobs.work('admin-notice-digests', async () => { await inviteRequests.queueDueDigests() })
      await ports.jobs.schedule('admin-notice-digests', '* * * * *')
    },
    inviteRequests,
    workspaceSettings: createWorkspaceSettingsService(ports),
    workspace: createWorkspaceSummaryService(ports),
    inviteLinks,
    bounces: createBounceService(ports),
    domains,
    health: createHealthService(ports),
    scim: { users: createScimUserService(scimDeps), groups: createScimGroupService(scimDeps) },
    async close () { await Promise.all([auth.close(), slack.close()]) }
  }
}
