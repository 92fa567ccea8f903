import type { components } from '../generated/openapi.js'
import type { ErrorCode } from '../errors.js'
import { escapeHtml } from '../lib/html.js'
import { htmlPage, PAGE_STYLE, type Page } from '../http/page-shell.js'
import { messageHtml, pageLook, type PageReader } from '../i18n/page-words.js'
import { DEFAULT_LOCALE, type Locale } from '../i18n/locales.js'
import { translate } from '../i18n/messages.js'

// What a person's browser shows at the end of an SSO sign-in that did not sign them in, and an
// admin's at the end of a test sign-in (handlers/sso-sign-in.ts answers these to a browser's
// navigation; API clients get the JSON). Words per reason family, never the provider's message;
// the short code, escaped, for whoever they ask for help. Nothing here runs a script. In the
// reader's language (Accept-Language: handlers/sso-sign-in.ts), words from pages.json.

type SsoTestSignIn = components['schemas']['SsoTestSignIn']

/** What a refusal page is made of: the answer's status, its registry code and `details.reason`. */
export interface RefusalView { status: number, code: ErrorCode | string, reason?: string | undefined }

const START_AGAIN = 'pages.sso.startAgain'
const ASK_ADMIN = 'pages.sso.askAdmin'
const CANCELLED = 'pages.sso.cancelled'
const NOT_VERIFIED = 'pages.sso.notVerified'
const PROVIDER_DOWN = 'pages.sso.providerDown'

/**
 * `details.reason` of SSO_SIGN_IN_REFUSED → the sentence a person reads (its key in pages.json).
 * A suspended member's reason is already `not_a_member` (sign-in-context.ts): the words a stranger
 * gets. A reason not listed gets NOT_VERIFIED, the safe advice for any check that failed.
 */
const REFUSAL_WORDS: Record<string, string> = {
  state_mismatch: START_AGAIN,
  state_expired: START_AGAIN,
  state_replayed: START_AGAIN,
  state_used: START_AGAIN,
  in_response_to_mismatch: START_AGAIN,
  unsolicited: START_AGAIN,
  code_rejected: START_AGAIN,
  nonce_mismatch: START_AGAIN,
  expired: START_AGAIN,
  not_yet_valid: START_AGAIN,
  replayed: START_AGAIN,
  not_a_member: ASK_ADMIN,
  no_email: ASK_ADMIN,
  domain_not_served: ASK_ADMIN,
  email_not_verified: ASK_ADMIN,
  provider_error: CANCELLED,
  status_not_success: CANCELLED,
  provider_unreachable: PROVIDER_DOWN,
  address_not_allowed: PROVIDER_DOWN,
  client_rejected: PROVIDER_DOWN,
  tenant_not_pinned: PROVIDER_DOWN,
  unsupported_algorithm: PROVIDER_DOWN,
  no_sso_redirect: PROVIDER_DOWN,
  no_certificate: PROVIDER_DOWN
}

/** The other answers these operations give a browser, by registry code. */
const ERROR_WORDS: Partial<Record<ErrorCode, string>> = {
  SSO_CONNECTION_NOT_FOUND: 'pages.sso.noConnection',
  VALIDATION_FAILED: 'pages.sso.damaged',
  RATE_LIMITED: 'pages.sso.rateLimited',
  UNAUTHENTICATED: 'pages.sso.sessionEnded',
  FORBIDDEN: 'pages.sso.adminsOnly',
  NOT_FOUND: 'pages.sso.notYours',
  UPSTREAM_FAILED: PROVIDER_DOWN,
  SERVICE_UNAVAILABLE: 'pages.sso.busy'
}

const FALLBACK = 'pages.sso.fallback'

const STYLE = `${PAGE_STYLE}
dd{margin:0;overflow-wrap:anywhere}dd span{display:block}code{font-size:.875rem}small{font-size:.875rem}`

/** The sentence for a refusal or another error answer, in `locale`. */
export function refusalWords (view: RefusalView, locale: Locale = DEFAULT_LOCALE): string {
  const key = view.code === 'SSO_SIGN_IN_REFUSED'
    ? REFUSAL_WORDS[view.reason ?? ''] ?? NOT_VERIFIED
    : ERROR_WORDS[view.code as ErrorCode] ?? FALLBACK
  return translate(locale, key)
}

/** The page of an answer that signed no one in: heading, what to do, the code for support, the way back. */
export function refusalPage (view: RefusalView, reader: PageReader = { locale: DEFAULT_LOCALE }): Page {
  const { locale } = reader
  const shown = view.code === 'SSO_SIGN_IN_REFUSED' && view.reason !== undefined ? view.reason : view.code
  const title = translate(locale, 'pages.sso.title')
  const code = `<code>${escapeHtml(shown)}</code>`
  const support = messageHtml(locale, 'pages.sso.support', { code }, { status: String(view.status) })
  return htmlPage(title, STYLE, () => `<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(refusalWords(view, locale))}</p>
<p><a href="/login">${escapeHtml(translate(locale, 'pages.sso.back'))}</a></p>
<p class="muted"><small>${support}</small></p>
</main>`, pageLook(reader))
}

const PROTOCOL_NAMES: Record<SsoTestSignIn['protocol'], string> = { oidc: 'OpenID Connect', saml: 'SAML 2.0' }

function fact (term: string, value: string): string {
  return `  <dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`
}

/** An admin's test sign-in: what the provider said, every value escaped; nobody was signed in. */
export function testSignInPage (result: SsoTestSignIn, reader: PageReader = { locale: DEFAULT_LOCALE }): Page {
  const { locale } = reader
  const t = (key: string) => translate(locale, key)
  const title = t('pages.sso.testTitle')
  const claims = Object.entries(result.claims)
  const claimList = claims.length === 0
    ? `<p class="muted">${escapeHtml(t('pages.sso.testNoClaims'))}</p>`
    : `<dl>
${claims.map(([name, values]) =>
  `  <dt>${escapeHtml(name)}</dt><dd>${values.map(v => `<span>${escapeHtml(v)}</span>`).join('')}</dd>`).join('\n')}
</dl>`
  return htmlPage(title, STYLE, () => `<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(t('pages.sso.testIntro'))}</p>
<dl>
${fact(t('pages.sso.testConnection'), `${result.connectionId} (${PROTOCOL_NAMES[result.protocol]})`)}
${fact(t('pages.sso.testIssuer'), result.issuer)}
${fact(t('pages.sso.testSubject'), result.subject)}
${fact(t('pages.sso.testEmail'), result.email ?? t('pages.sso.testNoEmail'))}
${fact(t('pages.sso.testEmailVerified'), result.emailVerified ? t('pages.sso.yes') : t('pages.sso.no'))}
</dl>
<h2>${escapeHtml(t('pages.sso.testClaims'))}</h2>
${claimList}
<p><a href="/console/sso">${escapeHtml(t('pages.sso.testBack'))}</a></p>
</main>`, pageLook(reader))
}
