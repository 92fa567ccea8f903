import type { Queryable } from '../db/client.js'
import { findRequiredConnectionByDomain, type SsoRequirementRow } from '../db/sso-connections.js'
import { serviceError, type ServiceError } from '../errors.js'

// Enforcement (issue 53, item 3): a connection with `required` means people at its domains sign
// in by SSO only. Every e-mailed door for an address at such a domain — the sign-in link, a join
// by verified domain, a join by invite link, a sign-up by invitation — asks here and refuses with
// SSO_REQUIRED, whose words name the way in. The rule is the domain's, whichever workspace the
// door belongs to: an address has one account in the service, and the workspace that verified the
// domain decides how its people sign in. Workspace admins keep the sign-in link (break-glass,
// src/auth/login-link.ts). It lives with sign-in (src/auth), below src/sso, whose sign-in accepts
// invitations through src/auth: the doors that ask (auth, domains, invite-links) import it here.

/** The connection an address must sign in through, and its domain. */
export type SsoRequirement = SsoRequirementRow & { domain: string }

/** The connection requiring SSO for the address's domain (`email` as stored: lower case), or null. */
export async function ssoRequirementOf (q: Queryable, email: string): Promise<SsoRequirement | null> {
  const domain = email.slice(email.lastIndexOf('@') + 1)
  const row = await findRequiredConnectionByDomain(q, domain)
  return row === null ? null : { ...row, domain }
}

/**
 * The refusal naming the way in: "Acme Robotics signs you in with Okta"; the two names also in
 * `details` (`workspace`, `connection`), so a page says the same in its reader's language.
 */
export function ssoRequired (r: SsoRequirement): ServiceError {
  return serviceError('SSO_REQUIRED', [r.workspaceName, r.connectionName], {
    workspace: r.workspaceName, connection: r.connectionName
  })
}

/** Throws SSO_REQUIRED when the address's domain requires sign-in by SSO. */
export async function refuseWhenSsoRequired (q: Queryable, email: string): Promise<void> {
  const r = await ssoRequirementOf(q, email)
  if (r !== null) throw ssoRequired(r)
}
