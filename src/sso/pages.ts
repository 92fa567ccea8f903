import type { components } from '../generated/openapi.js'
import type { ErrorCode } from '../errors.js'
import { escapeHtml } from '../lib/html.js'
import { htmlPage, PAGE_STYLE, type Page } from '../http/page-shell.js'

// What a person's browser shows at the end of an SSO sign-in that did not sign them in, and an
// admin's at the end of a test sign-in (handlers/sso-sign-in.ts answers these to a browser's
// navigation; API clients get the JSON). Words per reason family, never the provider's message;
// the short code, escaped, for whoever they ask for help. Nothing here runs a script.

type SsoTestSignIn = components['schemas']['SsoTestSignIn']

/** What a refusal page is made of: the answer's status, its registry code and `details.reason`. */
export interface RefusalView { status: number, code: ErrorCode | string, reason?: string | undefined }

const START_AGAIN = 'This sign-in attempt expired, was already used, or was started in another browser. ' +
  'Go back to the sign-in page and start again.'
const ASK_ADMIN = 'Your identity provider signed you in, but not with an account this workspace accepts. ' +
  'Ask your workspace admin to invite you.'
const CANCELLED = 'Your identity provider did not complete the sign-in. ' +
  'Start again; if it keeps happening, contact your workspace admin.'
const NOT_VERIFIED = 'The answer from your identity provider could not be verified. ' +
  'Start again; if it keeps happening, contact your workspace admin.'
const PROVIDER_DOWN = 'Your company\'s single sign-on is not working right now. ' +
  'Try again in a few minutes; if it keeps happening, contact your workspace admin.'

/**
 * `details.reason` of SSO_SIGN_IN_REFUSED → the sentence a person reads. A suspended member's
 * reason is already `not_a_member` (sign-in-context.ts): the words a stranger gets. A reason not
 * listed gets NOT_VERIFIED, the safe advice for any check that failed.
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
  SSO_CONNECTION_NOT_FOUND: 'Your address does not sign in with single sign-on here. ' +
    'Go back to the sign-in page to get a sign-in link by e-mail instead.',
  VALIDATION_FAILED: 'This sign-in link is incomplete or damaged. Go back to the sign-in page and start again.',
  RATE_LIMITED: 'There were too many sign-in attempts from your network. Wait a minute, then start again.',
  UNAUTHENTICATED: 'Your session has ended. Sign in as a workspace admin, then start the test sign-in again.',
  FORBIDDEN: 'Only a workspace admin can test a single sign-on connection.',
  NOT_FOUND: 'This single sign-on connection is not one of your workspace\'s. Start the test again from the console.',
  UPSTREAM_FAILED: PROVIDER_DOWN,
  SERVICE_UNAVAILABLE: 'The service is busy right now. Wait a moment, then start again.'
}

const FALLBACK = 'Something went wrong on our side. Wait a moment, then start again.'

const STYLE = `${PAGE_STYLE}
dd{margin:0;overflow-wrap:anywhere}dd span{display:block}code{font-size:.875rem}small{font-size:.875rem}`

/** The sentence for a refusal or another error answer. */
export function refusalWords (view: RefusalView): string {
  if (view.code === 'SSO_SIGN_IN_REFUSED') return REFUSAL_WORDS[view.reason ?? ''] ?? NOT_VERIFIED
  return ERROR_WORDS[view.code as ErrorCode] ?? FALLBACK
}

/** The page of an answer that signed no one in: heading, what to do, the code for support, the way back. */
export function refusalPage (view: RefusalView): Page {
  const shown = view.code === 'SSO_SIGN_IN_REFUSED' && view.reason !== undefined ? view.reason : view.code
  return htmlPage('Sign-in did not work', STYLE, () => `<main>
<h1>Sign-in did not work</h1>
<p>${escapeHtml(refusalWords(view))}</p>
<p><a href="/login">Back to the sign-in page</a></p>
<p class="muted"><small>For support: <code>${escapeHtml(shown)}</code> (${view.status})</small></p>
</main>`)
}

const PROTOCOL_NAMES: Record<SsoTestSignIn['protocol'], string> = { oidc: 'OpenID Connect', saml: 'SAML 2.0' }

function fact (term: string, value: string): string {
  return `  <dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`
}

/** An admin's test sign-in: what the provider said, every value escaped; nobody was signed in. */
export function testSignInPage (result: SsoTestSignIn): Page {
  const title = 'Test sign-in succeeded — nobody was signed in'
  const claims = Object.entries(result.claims)
  const claimList = claims.length === 0
    ? '<p class="muted">No other claims were received.</p>'
    : `<dl>
${claims.map(([name, values]) =>
  `  <dt>${escapeHtml(name)}</dt><dd>${values.map(v => `<span>${escapeHtml(v)}</span>`).join('')}</dd>`).join('\n')}
</dl>`
  return htmlPage(title, STYLE, () => `<main>
<h1>${escapeHtml(title)}</h1>
<p>Your identity provider answered this connection's test. This is what it said about you.</p>
<dl>
${fact('Connection', `${result.connectionId} (${PROTOCOL_NAMES[result.protocol]})`)}
${fact('Issuer', result.issuer)}
${fact('Subject', result.subject)}
${fact('E-mail', result.email ?? 'none stated')}
${fact('E-mail verified', result.emailVerified ? 'Yes' : 'No')}
</dl>
<h2>Claims</h2>
${claimList}
<p><a href="/console/sso">Back to the SSO settings</a></p>
</main>`)
}
