import type { Ports } from './ports/index.js'
import type { SecurityServices } from './auth/security.js'
import { createSessionService, type SessionService } from './sessions/service.js'
import { createMemberService, type MemberService } from './members/service.js'
import { createAuditTrailService, type AuditTrailService } from './audit/trail.js'
import { auditDigestJobs, createAuditProofService, type AuditProofService } from './audit/digests.js'
import { createAuthService, type AuthService } from './auth/service.js'
import { createSetupService, type SetupService } from './auth/setup.js'
import { createInvitationService, type InvitationService } from './invitations/service.js'
import { createIdempotency } from './idempotency/idempotency.js'
import { createApiKeyService, type ApiKeyService } from './api-keys/service.js'
import { createSlackService, type SlackService } from './slack/service.js'
import { createEventFeed, type EventFeed } from './events/feed.js'
import { createWebhookEndpointService, type WebhookEndpointService } from './webhooks/endpoints.js'
import { webhookJobs } from './webhooks/jobs.js'
import { createAddressPolicy } from './webhooks/address-policy.js'
import { webhookKeyring } from './webhooks/secrets.js'
import { invitationJobs } from './invitations/jobs.js'
import { domainJobs } from './domains/jobs.js'
import { inviteRequestJobs } from './invite-requests/jobs.js'
import { ssoJobs } from './sso/jobs.js'
import { createAuditStreamService, type AuditStreamService } from './audit-streams/streams.js'
import { auditStreamJobs } from './audit-streams/jobs.js'
import { streamKeyring } from './audit-streams/credentials.js'
import type { JobDefinition } from './ports/job-engine.js'
import { createInviteRequestService, type InviteRequestService } from './invite-requests/service.js'
import type { InviteRequestNotice } from './invite-requests/context.js'
import { createWorkspaceSettingsService, type WorkspaceSettingsService } from './workspaces/settings.js'
import { createWorkspaceSummaryService, type WorkspaceSummaryService } from './workspaces/summary.js'
import { createWorkspaceBrandingService, type WorkspaceBrandingService } from './workspaces/branding-service.js'
import { createInviteLinkService, type InviteLinkService } from './invite-links/service.js'
import { createBounceService, type BounceService } from './bounces/service.js'
import { createDomainService, type DomainService } from './domains/service.js'
import { createHealthService, type HealthService } from './health/service.js'
import { createPageContextService, type PageContextService } from './i18n/page-locale.js'
import { loadBranding } from './workspaces/branding.js'
import type { InviterNotice } from './ports/inviter-notices.js'
import { createAsyncRelay, createRelay } from './lib/relay.js'

// Idempotency-Keys are remembered this long (as Stripe does); after that a key may be used afresh.
const IDEMPOTENCY_RETENTION_MS = 86_400_000
import { createScimUserService, type ScimUserService } from './scim/users.js'
import { createScimGroupService, type ScimGroupService } from './scim/groups.js'
import { createSsoConnectionService, type SsoConnectionService } from './sso/connections.js'
import { ssoKeyring } from './sso/connection-secret.js'
import { createSsoSignInService, type SsoSignInService } from './sso/sign-in.js'
import { createOidcCache } from './sso/oidc-cache.js'
import { providerFetchOptions } from './sso/oidc-fetch.js'

/** Plain functions over ports, shared by the REST handlers, the MCP tools and the Slack bot. */
export interface Services {
  readonly ports: Ports
  readonly sessions: SessionService
  readonly security: SecurityServices
  readonly members: MemberService
  readonly auditTrail: AuditTrailService
  /** The audit chain's signing keys and signed hourly digests. */
  readonly auditProof: AuditProofService
  readonly auth: AuthService
  /** First run: the one-time setup link and the /setup page's operation. */
  readonly setup: SetupService
  readonly invitations: InvitationService
  readonly apiKeys: ApiKeyService
  readonly slack: SlackService
  readonly events: EventFeed
  readonly webhooks: WebhookEndpointService
  /** The audit trail delivered to SIEMs (Splunk, Datadog, HTTPS), with the webhooks' address policy. */
  readonly auditStreams: AuditStreamService
  /** The kinds of job the features run (src/plugins/jobs.ts starts their workers once the app is ready). */
  readonly jobs: readonly JobDefinition[]
  readonly inviteRequests: InviteRequestService
  readonly workspaceSettings: WorkspaceSettingsService
  readonly workspace: WorkspaceSummaryService
  /** The workspace's look: display name, accent colour, sender name, logo (issue 54). */
  readonly workspaceBranding: WorkspaceBrandingService
  readonly inviteLinks: InviteLinkService
  /** Bounces of invitation e-mails: the provider's webhook and the DSN listener. */
  readonly bounces: BounceService
  /** Join by verified domain: the admins' domains and the join links. */
  readonly domains: DomainService
  /** What GET /api/health reads: the database's ping, the mail relay as last seen. */
  readonly health: HealthService
  /** The language, look and time zone of a page before sign-in (src/i18n/page-locale.ts). */
  readonly pageContext: PageContextService
  /** SCIM 2.0 for company directories: Users and Groups under /scim/v2. */
  readonly scim: { readonly users: ScimUserService, readonly groups: ScimGroupService }
  /** Single sign-on: the workspace's connections to its own identity provider. */
  readonly ssoConnections: SsoConnectionService
  readonly ssoSignIn: SsoSignInService
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
  const streamKey = streamKeyring(ports.config)
  // A member the directory creates gets a sign-in link when the workspace asks for a welcome e-mail
  // (at a domain that requires SSO, an admin only: the others sign in by SSO).
  const welcome = (email: string): void => {
    auth.requestLoginLink(email, null, 'admins')
      .catch((err: unknown) => { ports.log.warn({ err: (err as Error).message }, 'welcome e-mail not scheduled') })
  }
  const scimDeps = { ...ports, welcome }
  const policy = createAddressPolicy({
    allowPrivate: ports.config.webhooks.allowPrivateAddresses, resolve: ports.lookup
  })
  // SSO issuer and metadata URLs follow the same policy, with the hosts the operator allows.
  const ssoPolicy = createAddressPolicy({
    allowPrivate: ports.config.webhooks.allowPrivateAddresses,
    resolve: ports.lookup,
    allowedHosts: ports.config.sso.allowedHosts
  })
  return {
    ports,
    sessions,
    security,
    members: createMemberService(ports),
    auditTrail: createAuditTrailService(ports),
    auditProof: createAuditProofService(ports),
    auth,
    setup: createSetupService({ ...ports, sessions }),
    invitations,
    apiKeys,
    slack,
    events: createEventFeed(ports),
    webhooks: createWebhookEndpointService({ ...ports, key: webhookKey, policy }),
    auditStreams: createAuditStreamService({ ...ports, key: streamKey, policy }),
    jobs: [
      ...webhookJobs({ ...ports, key: webhookKey, policy }),
      ...invitationJobs(ports, invitations),
      ...domainJobs(domains),
      ...inviteRequestJobs(inviteRequests),
      ...ssoJobs(ports),
      ...auditDigestJobs(ports),
      ...auditStreamJobs({ ...ports, key: streamKey, policy })
    ],
    inviteRequests,
    workspaceSettings: createWorkspaceSettingsService(ports),
    workspace: createWorkspaceSummaryService(ports),
    workspaceBranding: createWorkspaceBrandingService(ports),
    inviteLinks,
    bounces: createBounceService(ports),
    domains,
    health: createHealthService(ports),
    pageContext: createPageContextService({ ...ports, loadLook: loadBranding }),
    scim: { users: createScimUserService(scimDeps), groups: createScimGroupService(scimDeps) },
    ssoConnections: createSsoConnectionService({ ...ports, key: ssoKeyring(ports.config), policy: ssoPolicy }),
    ssoSignIn: createSsoSignInService({
      ...ports,
      sessions,
      key: ssoKeyring(ports.config),
      // Where private addresses are allowed (APP_ENV=local, tests), a provider on loopback over http too.
      fetch: providerFetchOptions(ports.config),
      cache: createOidcCache({ clock: ports.clock })
    }),
    async close () { await Promise.all([auth.close(), slack.close()]) }
  }
}
