import type { HandlerDeps, HandlerMap } from './types.js'
import { healthHandlers } from './health.js'
import { metaHandlers } from './meta.js'
import { adminHandlers } from './admin.js'
import { auditProofHandlers } from './audit-proof.js'
import { invitationHandlers } from './invitations.js'
import { authHandlers } from './auth.js'
import { usersHandlers } from './users.js'
import { oauthHandlers } from './oauth.js'
import { pagesHandlers } from './pages.js'
import { slackHandlers } from './slack.js'
import { apiKeyHandlers } from './api-keys.js'
import { mcpHandlers } from './mcp.js'
import { webhookHandlers } from './webhooks.js'
import { auditStreamHandlers } from './audit-streams.js'
import { workspaceHandlers } from './workspace.js'
import { brandingHandlers } from './branding.js'
import { inviteRequestHandlers } from './invite-requests.js'
import { inviteLinkHandlers } from './invite-links.js'
import { emailEventHandlers } from './email-events.js'
import { domainHandlers } from './domains.js'
import { scimHandlers } from './scim.js'
import { ssoHandlers } from './sso.js'
import { ssoSignInHandlers } from './sso-sign-in.js'

/** The operationId → handler map glue binds. Its type makes a missing operation a compile error. */
export function createHandlers (deps: HandlerDeps): HandlerMap {
  return {
    ...healthHandlers(deps),
    ...metaHandlers(deps),
    ...adminHandlers(deps),
    ...auditProofHandlers(deps),
    ...invitationHandlers(deps),
    ...authHandlers(deps),
    ...usersHandlers(deps),
    ...oauthHandlers(deps),
    ...pagesHandlers(deps),
    ...slackHandlers(deps),
    ...apiKeyHandlers(deps),
    ...mcpHandlers(deps),
    ...webhookHandlers(deps),
    ...auditStreamHandlers(deps),
    ...workspaceHandlers(deps),
    ...brandingHandlers(deps),
    ...inviteRequestHandlers(deps),
    ...inviteLinkHandlers(deps),
    ...emailEventHandlers(deps),
    ...domainHandlers(deps),
    ...scimHandlers(deps),
    ...ssoHandlers(deps),
    ...ssoSignInHandlers(deps)
  } satisfies HandlerMap
}
