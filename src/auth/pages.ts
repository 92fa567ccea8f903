import { escapeHtml } from '../lib/html.js'
import { htmlPage, layout, PAGE_STYLE, type Page } from '../http/page-shell.js'
import {
  CURRENT_SESSION, emailField, factList, NAME_FIELD, otherBrowserWarning, pageHeading
} from '../lib/page-parts.js'

// The small HTML pages (/signup, /login, /setup; / is the admin console: src/console/page.ts).
// Nothing from the request is written into the markup: the scripts read the token from
// location.search and render answers with textContent.
// The shell they share (nonce, CSP, style) is src/http/page-shell.ts; their common parts
// (heading, facts, fields, warnings) src/lib/page-parts.ts.

export function signupPage (): Page {
  return layout('Accept your invitation', `
${pageHeading('Accept your invitation', { text: 'Checking your invitation…' })}
<form id="accept" hidden>
  ${factList([
    ['Workspace', 'inv-workspace'], ['E-mail', 'inv-email'], ['Role', 'inv-role'], ['Invited by', 'inv-by'],
    ['Expires', 'inv-expires']
  ])}
  ${NAME_FIELD}
  ${CURRENT_SESSION}
  <button id="accept-button" type="submit">Accept invitation</button>
</form>`, 'signup.js')
}

/**
 * `/login`: the address first. Continue sends an address at a domain an SSO connection serves to
 * its provider, and e-mails anyone else a sign-in link (page-scripts/login.ts says how it knows);
 * the link can be asked for directly too, which is how a workspace admin reaches break-glass when
 * the provider is down. `?token=` shows the link's account and signs in on the click.
 */
export function loginPage (opts: { identityProvider: boolean }): Page {
  const idpLink = opts.identityProvider
    ? '<p><a href="/api/oauth/login">Sign in with your organization instead</a></p>'
    : ''
  return layout('Sign in', `
${pageHeading('Sign in', { hidden: true })}
<form id="confirm" hidden>
  <p>This link signs in to <strong id="link-email"></strong> in the workspace <strong id="link-workspace"></strong>.</p>
  ${otherBrowserWarning('Sign in')}
  ${CURRENT_SESSION}
  <button id="signin-button" type="submit"></button>
</form>
<form id="request-link">
  <p class="muted">If your company signs you in with its own identity provider, Continue takes you
  there. Otherwise we e-mail you a sign-in link.</p>
  ${emailField('E-mail address')}
  <button id="continue-button" type="submit">Continue</button>
  <p><button id="send-button" class="link" type="submit">E-mail me a sign-in link instead</button></p>
</form>
<form id="break-glass" hidden>
  <p class="muted">A workspace admin may still sign in by e-mailed link; its use is recorded in the audit trail.</p>
  <button id="break-glass-button" type="submit">I am a workspace admin: e-mail me a link</button>
</form>${idpLink}`, 'login.js')
}

export function setupPage (opts: { pending: boolean }): Page {
  // Set up already: the same message POST /api/setup answers (410 SETUP_COMPLETE), and the way on.
  return layout('Set up your workspace', `
${pageHeading('Set up your workspace', {
  text: 'This service is set up already:\n<a href="/login">sign in</a> instead.', hidden: opts.pending
})}
<form id="setup" hidden>
  <p class="muted">The first workspace and its admin: you. Others are invited from there.</p>
  <label for="workspace-name">Workspace name</label>
  <input id="workspace-name" name="workspaceName" maxlength="200" required>
  ${emailField('Your e-mail address')}
  ${NAME_FIELD}
  ${CURRENT_SESSION}
  <button id="setup-button" type="submit">Create the workspace and sign in</button>
</form>`, 'setup.js')
}

/** What an invite link's page says: its workspace's name only, or why the link is not usable. */
export type JoinPageView =
  | { state: 'open', workspaceName: string, requiresApproval: boolean }
  | { state: 'not_found' | 'expired' | 'used_up' }

const JOIN_REFUSALS = {
  not_found: ['This invite link is not valid', 'It may have been revoked or replaced by a new one.'],
  expired: ['This invite link has expired', 'Invite links work for a limited time.'],
  used_up: ['This invite link has been used up', 'It has been used as many times as it allows.']
} as const

/**
 * `/join/{code}`: opening it changes nothing. The workspace's name is the one thing it shows of
 * the workspace (escaped); the script reads the code from the path and `?confirm=` from the query.
 * A link whose joins an admin approves says so before each step: the click asks, it does not join.
 */
export function joinPage (view: JoinPageView): Page {
  if (view.state !== 'open') {
    const [title, why] = JOIN_REFUSALS[view.state]
    return htmlPage(title, PAGE_STYLE, () => `<main>
<h1>${title}</h1>
<p>${why} Ask whoever shared it with you for a new link.</p>
</main>`)
  }
  const name = escapeHtml(view.workspaceName)
  const approval = view.requiresApproval
  const next = approval
    ? `<p class="what-happens">An admin of <strong>${name}</strong> decides on each person who asks ` +
      'through this link. ' +
      'If they approve, you get an invitation by e-mail; if not, an e-mail says so.</p>'
    : ''
  return layout(`Join ${view.workspaceName}`, `<main>
${pageHeading(`Join ${name}`, { live: true, hidden: true })}
<form id="join">
  <p class="muted">We e-mail you a link to confirm your address first.</p>
  ${next}
  ${emailField('Your e-mail address')}
  ${NAME_FIELD}
  <button id="join-button" type="submit">E-mail me a link to ${approval ? 'ask to join' : 'join'}</button>
</form>
<form id="confirm" hidden>
  <p>This link confirms <strong id="confirm-email"></strong> <span id="confirm-outcome"></span>
  <strong>${name}</strong>.</p>
  ${otherBrowserWarning('Confirm', 'their new account')}
  ${next}
  ${CURRENT_SESSION}
  <button id="confirm-button" type="submit"></button>
</form>
</main>`, 'join.js')
}
