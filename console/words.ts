import type { components } from '../src/generated/openapi.js'
import { decimal, loadScreenWords, screenWordsOf, type ScreenWordKey } from './i18n.js'
import type own from '../src/i18n/catalogues/en/console-refusals.json'

// The words a person reads for a refused request, in one place: by the field the error names
// (`details.errors[].field`, or the field a code always concerns) and by the error's code. Never
// the validator's own text (`body.domain must match pattern …`): nobody can act on that. The words
// are a catalogue of their own (console-refusals.json), in the reader's language (i18n.ts),
// fetched when a request is first refused (`refusalWords`, awaited by api.ts `call`): a first
// load that nothing refuses does not carry them (1.8–2 kB of brotli of every screen's 25 kB).

const { t, has } = screenWordsOf<typeof own>('refusals')
type WordKey = ScreenWordKey<typeof own>

/**
 * Fetch the refusals' words in the reader's language (once). If they cannot be fetched, a code has
 * no words of its own here (the service's `message` is said) and a field none (api.ts).
 */
export async function refusalWords (): Promise<void> {
  await loadScreenWords('refusals').catch(() => {})
}

type Code = components['schemas']['ErrorCode']

/** What to enter instead, by the contract's field name (the last part of a dotted path). */
const FIELD_WORDS: Record<string, WordKey> = {
  email: 'fieldEmail',
  emails: 'fieldEmails',
  name: 'fieldName',
  domain: 'fieldDomain',
  allowedDomains: 'fieldAllowedDomains',
  url: 'fieldUrl',
  description: 'fieldDescription',
  reason: 'fieldReason',
  maxUses: 'fieldMaxUses',
  expiresInHours: 'fieldExpiresInHours',
  role: 'fieldRole',
  eventTypes: 'fieldEventTypes',
  rows: 'fieldRows',
  policy: 'fieldPolicy',
  q: 'fieldQ',
  actor: 'fieldEmail',
  since: 'fieldSince',
  until: 'fieldUntil',
  adminGroup: 'fieldAdminGroup',
  domains: 'fieldDomains',
  issuer: 'fieldIssuer',
  clientId: 'fieldClientId',
  clientSecret: 'fieldClientSecret',
  tenantId: 'fieldTenantId',
  idpMetadataUrl: 'fieldIdpMetadataUrl',
  idpMetadataXml: 'fieldIdpMetadataXml',
  idpCertificates: 'fieldIdpCertificates',
  oidc: 'fieldOidc',
  saml: 'fieldSaml',
  displayName: 'fieldDisplayName',
  senderName: 'fieldSenderName',
  accentColor: 'fieldAccentColor'
}

/** What the messages quote as it is, in every language. */
const QUOTED = {
  lt: '<',
  gt: '>',
  begin: '-----BEGIN CERTIFICATE-----',
  end: '-----END CERTIFICATE-----',
  example: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  issuer: 'https://login.microsoftonline.com/<tenant id>/v2.0'
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
const CODE_WORDS: Partial<Record<Code, WordKey>> = {
  WEBHOOK_URL_NOT_ALLOWED: 'codeWebhookUrlNotAllowed',
  DOMAIN_NOT_ALLOWED: 'codeDomainNotAllowed',
  DOMAIN_EXISTS: 'codeDomainExists',
  DOMAIN_CLAIMED: 'codeDomainClaimed',
  USER_EXISTS: 'codeUserExists',
  MEMBER_SUSPENDED: 'codeMemberSuspended',
  LAST_ADMIN: 'codeLastAdmin',
  MANAGED_BY_DIRECTORY: 'codeManagedByDirectory',
  DOMAIN_LIMIT_REACHED: 'codeDomainLimitReached',
  API_KEY_LIMIT_REACHED: 'codeApiKeyLimitReached',
  INVITE_REQUEST_LIMIT_REACHED: 'codeInviteRequestLimitReached',
  INVITATION_NOT_PENDING: 'codeInvitationNotPending',
  INVITE_REQUEST_NOT_PENDING: 'codeInviteRequestNotPending',
  WEBHOOK_ENDPOINT_DISABLED: 'codeWebhookEndpointDisabled',
  SSO_DOMAIN_NOT_VERIFIED: 'codeSsoDomainNotVerified',
  SSO_DOMAIN_TAKEN: 'codeSsoDomainTaken',
  SSO_URL_NOT_ALLOWED: 'codeSsoUrlNotAllowed',
  SSO_ISSUER_NOT_ALLOWED: 'codeSsoIssuerNotAllowed',
  SSO_CERTIFICATE_INVALID: 'codeSsoCertificateInvalid',
  SSO_METADATA_UNAVAILABLE: 'codeSsoMetadataUnavailable'
}

/** A code's words in the reader's language, if it has its own. */
const codeText = (code: string | undefined): string | undefined => {
  const key = CODE_WORDS[code as Code]
  return key === undefined || !has(key) ? undefined : t(key, QUOTED)
}

export interface FieldError {
  /** The contract's field: `url`, `allowedDomains`, `rows.2.email` … */
  field: string
  words: string
}

const lastPart = (field: string): string => field.split('.').filter(p => !/^\d+$/.test(p)).pop() ?? field

/** The words for one field, refused with `code`. */
function wordsFor (code: string | undefined, field: string): string {
  return codeText(code) ?? t(FIELD_WORDS[lastPart(field)] ?? 'fieldOther', QUOTED)
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
    const words = t('accentTooLight', { color: String(contrast.accentColor), ratio: decimal(Number(contrast.ratio), 2) })
    return [{ field: 'accentColor', words }]
  }
  // A refusal that names its field in `details` (`in`, `field`: the SSO connection's refusals).
  const named = (details as { field?: unknown } | undefined)?.field
  const field = typeof named === 'string' && named !== '' ? named : CODE_FIELD[code as Code]
  return field === undefined ? [] : [{ field, words: wordsFor(code, field) }]
}

/** A sentence for a code with no field, when its words say more than the service's message. */
export function codeWords (code: string | undefined): string | undefined {
  return codeText(code)
}
