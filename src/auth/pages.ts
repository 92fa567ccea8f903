import { escapeHtml } from '../lib/html.js'
import { htmlPage, layout, PAGE_STYLE, type Page } from '../http/page-shell.js'
import { messageHtml, pageLook, scriptWord, sharedScriptWords, type PageReader } from '../i18n/page-words.js'
import { translate } from '../i18n/messages.js'
import {
  CURRENT_SESSION, emailField, factList, nameField, otherBrowserWarning, pageHeading
} from '../http/page-parts.js'

// The small HTML pages (/signup, /login, /setup; / is the admin console: src/console/page.ts).
// Nothing from the request is written into the markup: the scripts read the token from
// location.search and render answers with textContent. Each is written in its reader's language
// (`reader`, chosen by src/i18n/page-locale.ts), with its words in src/i18n/catalogues/*/pages.json;
// what the scripts show comes with the page (`words`), never as English in the script.
// The shell they share (nonce, CSP, style, language, look) is src/http/page-shell.ts; their common
// parts (heading, facts, fields, warnings) src/http/page-parts.ts.

export function signupPage (reader: PageReader): Page {
  const { locale } = reader
  const t = (key: string) => escapeHtml(translate(locale, key))
  const title = translate(locale, 'pages.signup.title')
  return layout(title, `
${pageHeading(escapeHtml(title), { text: t('pages.signup.checking') })}
<form id="accept" hidden>
  ${factList([
    [translate(locale, 'pages.fact.workspace'), 'inv-workspace'], [translate(locale, 'pages.fact.email'), 'inv-email'],
    [translate(locale, 'pages.fact.role'), 'inv-role'], [translate(locale, 'pages.fact.invitedBy'), 'inv-by'],
    [translate(locale, 'pages.fact.expires'), 'inv-expires']
  ])}
  ${nameField(translate(locale, 'pages.field.name'))}
  ${CURRENT_SESSION}
  <button id="accept-button" type="submit">${t('pages.signup.accept')}</button>
</form>`, 'signup.js', pageLook(reader), {
    ...sharedScriptWords(locale),
    needsLink: translate(locale, 'pages.signup.needsLink'),
    acceptAs: scriptWord(locale, 'pages.signup.acceptAs', ['email']),
    'role.admin': translate(locale, 'pages.role.admin'),
    'role.member': translate(locale, 'pages.role.member')
  })
}

/**
 * `/login`: the address first. Continue sends an address at a domain an SSO connection serves to
 * its provider, and e-mails anyone else a sign-in link (page-scripts/login.ts says how it knows);
 * the link can be asked for directly too, which is how a workspace admin reaches break-glass when
 * the provider is down. `?token=` shows the link's account and signs in on the click.
 */
export function loginPage (opts: { identityProvider: boolean }, reader: PageReader): Page {
  const { locale } = reader
  const t = (key: string) => escapeHtml(translate(locale, key))
  const idpLink = opts.identityProvider
    ? `<p><a href="/api/oauth/login">${t('pages.login.identityProvider')}</a></p>`
    : ''
  const title = translate(locale, 'pages.login.title')
  return layout(title, `
${pageHeading(escapeHtml(title), { hidden: true })}
<form id="confirm" hidden>
  <p>${messageHtml(locale, 'pages.login.linkFor', {
    email: '<strong id="link-email"></strong>', workspace: '<strong id="link-workspace"></strong>'
  })}</p>
  ${otherBrowserWarning(translate(locale, 'pages.otherBrowser.signIn'))}
  ${CURRENT_SESSION}
  <button id="signin-button" type="submit"></button>
</form>
<form id="request-link">
  <p class="muted">${t('pages.login.intro')}</p>
  ${emailField(translate(locale, 'pages.field.email'))}
  <button id="continue-button" type="submit">${t('pages.login.continue')}</button>
  <p><button id="send-button" class="link" type="submit">${t('pages.login.sendLink')}</button></p>
</form>
<form id="break-glass" hidden>
  <p class="muted">${t('pages.login.breakGlassIntro')}</p>
  <button id="break-glass-button" type="submit">${t('pages.login.breakGlass')}</button>
</form>${idpLink}`, 'login.js', pageLook(reader), {
    ...sharedScriptWords(locale),
    checkingLink: translate(locale, 'pages.checkingLink'),
    signInAs: scriptWord(locale, 'pages.login.signInAs', ['email']),
    toProvider: translate(locale, 'pages.login.toProvider'),
    linkSent: translate(locale, 'pages.login.linkSent')
  })
}

export function setupPage (opts: { pending: boolean }, reader: PageReader): Page {
  const { locale } = reader
  const t = (key: string) => escapeHtml(translate(locale, key))
  const title = translate(locale, 'pages.setup.title')
  // Set up already: what POST /api/setup answers (410 SETUP_COMPLETE), and the way on.
  return layout(title, `
${pageHeading(escapeHtml(title), {
  text: `${t('pages.setup.done')}\n<a href="/login">${t('pages.setup.signInInstead')}</a>`, hidden: opts.pending
})}
<form id="setup" hidden>
  <p class="muted">${t('pages.setup.intro')}</p>
  <label for="workspace-name">${t('pages.setup.workspaceName')}</label>
  <input id="workspace-name" name="workspaceName" maxlength="200" required>
  ${emailField(translate(locale, 'pages.field.yourEmail'))}
  ${nameField(translate(locale, 'pages.field.name'))}
  ${CURRENT_SESSION}
  <button id="setup-button" type="submit">${t('pages.setup.submit')}</button>
</form>`, 'setup.js', pageLook(reader), {
    ...sharedScriptWords(locale),
    needsLink: translate(locale, 'pages.setup.needsLink')
  })
}

/** What an invite link's page says: its workspace's name only, or why the link is not usable. */
export type JoinPageView =
  | { state: 'open', workspaceName: string, requiresApproval: boolean }
  | { state: 'not_found' | 'expired' | 'used_up' }

/** A link that cannot be used: the page's heading and why, per state. */
function joinRefusal (reader: PageReader, state: 'not_found' | 'expired' | 'used_up'): Page {
  const { locale } = reader
  const refusals: Record<typeof state, readonly [string, string]> = {
    not_found: [translate(locale, 'pages.join.notFound'), translate(locale, 'pages.join.notFoundWhy')],
    expired: [translate(locale, 'pages.join.expired'), translate(locale, 'pages.join.expiredWhy')],
    used_up: [translate(locale, 'pages.join.usedUp'), translate(locale, 'pages.join.usedUpWhy')]
  }
  const [title, why] = refusals[state]
  return htmlPage(title, PAGE_STYLE, () => `<main>
<h1>${escapeHtml(title)}</h1>
<p>${escapeHtml(why)}</p>
</main>`, pageLook(reader))
}

/**
 * `/join/{code}`: opening it changes nothing. The workspace's name is the one thing it shows of
 * the workspace (escaped); the script reads the code from the path and `?confirm=` from the query.
 * A link whose joins an admin approves says so before each step: the click asks, it does not join.
 */
export function joinPage (view: JoinPageView, reader: PageReader): Page {
  if (view.state !== 'open') return joinRefusal(reader, view.state)
  const { locale } = reader
  const t = (key: string) => escapeHtml(translate(locale, key))
  const name = `<strong>${escapeHtml(view.workspaceName)}</strong>`
  const approval = view.requiresApproval
  const next = approval
    ? `<p class="what-happens">${messageHtml(locale, 'pages.join.approval', { workspace: name })}</p>`
    : ''
  const workspace = { workspace: view.workspaceName }
  const title = translate(locale, 'pages.join.title', workspace)
  return layout(title, `
${pageHeading(escapeHtml(title), { live: true, hidden: true })}
<form id="join">
  <p class="muted">${t('pages.join.confirmFirst')}</p>
  ${next}
  ${emailField(translate(locale, 'pages.field.yourEmail'))}
  ${nameField(translate(locale, 'pages.field.name'))}
  <button id="join-button" type="submit">${approval ? t('pages.join.submitAsk') : t('pages.join.submit')}</button>
</form>
<form id="confirm" hidden>
  <p id="confirm-text"></p>
  ${otherBrowserWarning(translate(locale, 'pages.otherBrowser.confirm'))}
  ${next}
  ${CURRENT_SESSION}
  <button id="confirm-button" type="submit"></button>
</form>
`, 'join.js', pageLook(reader), {
    ...sharedScriptWords(locale),
    checkingLink: translate(locale, 'pages.checkingLink'),
    confirmsJoin: scriptWord(locale, 'pages.join.confirmsJoin', ['email'], workspace),
    confirmsAsk: scriptWord(locale, 'pages.join.confirmsAsk', ['email'], workspace),
    joinAs: scriptWord(locale, 'pages.join.joinAs', ['email']),
    confirmAndAsk: scriptWord(locale, 'pages.join.confirmAndAsk', ['email']),
    linkSent: translate(locale, 'pages.join.linkSent'),
    requested: translate(locale, 'pages.join.requested', workspace)
  })
}
