import type { components } from '../src/generated/openapi.js'

// The words a person reads for a refused request, in one place: by the field the error names
// (`details.errors[].field`, or the field a code always concerns) and by the error's code. Never
// the validator's own text (`body.domain must match pattern …`): nobody can act on that.

type Code = components['schemas']['ErrorCode']

/** What to enter instead, by the contract's field name (the last part of a dotted path). */
const FIELD_WORDS: Record<string, string> = {
  email: 'Enter an e-mail address, such as ada@example.com.',
  emails: 'Enter e-mail addresses, such as ada@example.com.',
  name: 'Enter a name: it cannot be empty or too long.',
  domain: 'Enter a domain name such as acme.com: no @, no / and no spaces.',
  allowedDomains: 'Enter domain names such as acme.com, separated by commas: no @, no / and no spaces.',
  url: 'Enter an https:// address (at most 2,000 characters).',
  description: 'Shorten the description.',
  reason: 'Shorten the reason.',
  maxUses: 'Enter a whole number from 1 to 100,000, or leave it empty for unlimited uses.',
  expiresInHours: 'Choose when the link expires.',
  role: 'Choose admin or member.',
  eventTypes: 'Choose events from the list.',
  rows: 'Enter at least one address, and at most 1,000 a request.',
  policy: 'Choose a policy from the list.',
  q: 'Shorten the search.',
  actor: 'Enter an e-mail address, such as ada@example.com.',
  since: 'Enter a date and time.',
  until: 'Enter a date and time after the start.',
  adminGroup: 'Enter the group\'s name as the directory shows it: at most 200 characters, no line breaks.',
  domains: 'Choose verified domains of this workspace.',
  issuer: 'Enter the provider\'s issuer, an https:// address such as https://acme.okta.com.',
  clientId: 'Paste the client (application) ID the provider gave: no spaces.',
  clientSecret: 'Paste the client secret the provider gave: no spaces.',
  tenantId: 'Paste the Directory (tenant) ID from Entra ID\'s Overview, such as 72f988bf-86f1-41af-91ab-2d7cd011db47.',
  idpMetadataUrl: 'Enter the provider\'s metadata URL, an https:// address.',
  idpMetadataXml: 'Paste the provider\'s metadata document: XML, starting with <.',
  idpCertificates: 'Paste one to five certificates in PEM, each from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----.',
  oidc: 'Enter the issuer, the client ID and the client secret.',
  saml: 'Enter the metadata and the signing certificate.',
  displayName: 'Enter the name e-mails and pages show: at most 100 characters, no line breaks.',
  senderName: 'Enter the name e-mails come from: at most 100 characters, no quotes, < or >.',
  accentColor: 'Choose a colour as #rrggbb, such as #1d4ed8.'
}

/** Codes that always concern one field of the form that sent them. */
const CODE_FIELD: Partial<Record<Code, string>> = {
  WEBHOOK_URL_NOT_ALLOWED: 'url',
  DOMAIN_NOT_ALLOWED: 'domain',
  DOMAIN_EXISTS: 'domain',
  DOMAIN_CLAIMED: 'domain',
  USER_EXISTS: 'email',
  MEMBER_SUSPENDED: 'email'
}

/** The words for a code that concerns a field, when they say more than the field's own words. */
const CODE_WORDS: Partial<Record<Code, string>> = {
  WEBHOOK_URL_NOT_ALLOWED: 'This address cannot receive webhooks: use a public https:// address (not a private or local one).',
  DOMAIN_NOT_ALLOWED: 'This domain cannot be added: use your organization\'s own domain, not a public mail provider\'s.',
  DOMAIN_EXISTS: 'This workspace has added this domain already.',
  DOMAIN_CLAIMED: 'Another workspace has verified this domain.',
  USER_EXISTS: 'This person is a member already.',
  MEMBER_SUSPENDED: 'This person is a suspended member: reactivate them on Members instead.',
  LAST_ADMIN: 'A workspace always keeps one admin: make another member an admin first.',
  MANAGED_BY_DIRECTORY: 'Your company directory deactivated this member: reactivate them there, and they come back here.',
  DOMAIN_LIMIT_REACHED: 'This workspace has as many domains as it may: remove one first.',
  API_KEY_LIMIT_REACHED: 'This workspace has as many API keys as it may: revoke one first.',
  INVITE_REQUEST_LIMIT_REACHED: 'You have asked for as many invitations as you may for now: wait for the admins to decide.',
  INVITATION_NOT_PENDING: 'This invitation is not pending any more.',
  INVITE_REQUEST_NOT_PENDING: 'Another admin has decided this request already.',
  WEBHOOK_ENDPOINT_DISABLED: 'This endpoint is disabled: enable it first.',
  SSO_DOMAIN_NOT_VERIFIED: 'Choose only verified domains of this workspace: verify a domain on Domains first.',
  SSO_DOMAIN_TAKEN: 'Another connection serves one of these domains, and a domain serves one connection: remove it there first.',
  SSO_URL_NOT_ALLOWED: 'This address cannot be used: enter an https:// address on a public host (a host of your private network only if the operator allows it, SSO_ALLOWED_HOSTS).',
  SSO_ISSUER_NOT_ALLOWED: 'Use your own tenant\'s issuer, https://login.microsoftonline.com/<tenant id>/v2.0, with that same Directory (tenant) ID: a multi-tenant issuer (/common/, /organizations/) would let in any tenant.',
  SSO_CERTIFICATE_INVALID: 'This does not read as an X.509 certificate: paste the provider\'s signing certificate in PEM (Base64), from -----BEGIN CERTIFICATE----- to -----END CERTIFICATE-----.',
  SSO_METADATA_UNAVAILABLE: 'The provider\'s metadata could not be read at this address: check the metadata URL the provider shows, or paste the metadata XML instead.'
}

export interface FieldError {
  /** The contract's field: `url`, `allowedDomains`, `rows.2.email` … */
  field: string
  words: string
}

const lastPart = (field: string): string => field.split('.').filter(p => !/^\d+$/.test(p)).pop() ?? field

/** The words for one field, refused with `code`. */
function wordsFor (code: string | undefined, field: string): string {
  return CODE_WORDS[code as Code] ?? FIELD_WORDS[lastPart(field)] ?? 'Check this value.'
}

/**
 * The fields an ErrorResponse concerns, each with its words: `details.errors` of a
 * VALIDATION_FAILED (`in` and `field`), the field `details` names, or the field a code always concerns.
 */
export function fieldErrors (code: string | undefined, details: unknown): FieldError[] {
  const listed = (details as { errors?: unknown } | undefined)?.errors
  if (code === 'VALIDATION_FAILED' && Array.isArray(listed)) {
    const seen = new Set<string>()
    return listed.flatMap((e: { in?: unknown, field?: unknown }) => {
      if (typeof e.field !== 'string' || e.field === '' || seen.has(e.field)) return []
      seen.add(e.field)
      return [{ field: e.in === 'body' || e.in === undefined ? e.field : `${String(e.in)}.${e.field}`, words: wordsFor(code, e.field) }]
    })
  }
  // An accent colour too light to read: the contrast it reached, from `details.contrast`.
  const contrast = (details as { contrast?: { accentColor?: unknown, ratio?: unknown } } | undefined)?.contrast
  if (code === 'ACCENT_COLOR_CONTRAST_TOO_LOW' && contrast !== undefined) {
    const words = `${String(contrast.accentColor)} reaches only ${Number(contrast.ratio).toFixed(2)}:1 against white: ` +
      'white button text and links in it need at least 4.5:1. Choose a darker colour.'
    return [{ field: 'accentColor', words }]
  }
  // A refusal that names its field in `details` (`in`, `field`: the SSO connection's refusals).
  const named = (details as { field?: unknown } | undefined)?.field
  const field = typeof named === 'string' && named !== '' ? named : CODE_FIELD[code as Code]
  return field === undefined ? [] : [{ field, words: wordsFor(code, field) }]
}

/** A sentence for a code with no field, when its words say more than the service's message. */
export function codeWords (code: string | undefined): string | undefined {
  return CODE_WORDS[code as Code]
}
