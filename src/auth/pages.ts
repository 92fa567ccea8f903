import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import type { operations } from '../generated/openapi.js'
import { escapeHtml } from '../lib/html.js'
import { projectRoot } from '../paths.js'

// The small HTML pages (/signup, /login, /setup; / is the admin console: src/console/page.ts).
// Nothing from the request is written into the markup: the scripts read the token from
// location.search and render answers with textContent.
// Each response carries a fresh CSP nonce; only the script elements and the style that carry it run.

export interface Page { html: string, headers: Record<string, string> }

const STYLE = [
  'body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}',
  'h1{font-size:1.5rem}label{display:block;margin:.75rem 0 .25rem}' +
    'input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}',
  'button{font:inherit;margin-top:1rem;padding:.4rem 1rem;cursor:pointer}.error{color:#b00020}.muted{color:#666}',
  'dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}[hidden]{display:none}'
].join('\n')

// The pages' scripts are TypeScript files in page-scripts/ (linted, type-checked against the
// contract's types), compiled by the console's build into dist/page-scripts/ and served by
// getPageScript. Each page loads the shared helpers, then its own script, both with the nonce.
export type PageScript = operations['getPageScript']['parameters']['path']['script']
export const pageScriptsDir = join(projectRoot, 'dist', 'page-scripts')

/** The headers of every HTML page: its CSP, which lets run only what carries this response's nonce. */
function pageHeaders (nonce: string): Record<string, string> {
  return {
    'content-security-policy': [
      "default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src 'nonce-${nonce}'`, "connect-src 'self'",
      "img-src 'self'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"
    ].join('; '),
    // The signup and login URLs carry tokens: never send them onwards, never cache the page.
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store'
    // nosniff, X-Frame-Options and the rest: on every response (src/plugins/helmet.ts).
  }
}

/**
 * An HTML page under its own nonce: the style element (or the stylesheet link, for styles in a
 * file: `{ href }`) and whatever `body(nonce)` writes (its scripts) carry it. Every page links the
 * service's icon (browsers asked for /favicon.ico: 404).
 */
export function htmlPage (title: string, style: string | { href: string }, body: (nonce: string) => string): Page {
  const nonce = randomBytes(16).toString('base64')
  const styles = typeof style === 'string'
    ? `<style nonce="${nonce}">${style}</style>`
    : `<link rel="stylesheet" nonce="${nonce}" href="${escapeHtml(style.href)}">`
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
${styles}
</head>
<body>
${body(nonce)}
</body>
</html>
`
  return { html, headers: pageHeaders(nonce) }
}

export function layout (
  title: string, body: string, script: Exclude<PageScript, 'page-helpers.js' | 'console.js'>
): Page {
  return htmlPage(title, STYLE, nonce => `${body}
<script nonce="${nonce}" src="/assets/page-helpers.js"></script>
<script nonce="${nonce}" src="/assets/${script}"></script>`)
}

export function signupPage (): Page {
  return layout('Accept your invitation', `
<h1>Accept your invitation</h1>
<p id="status" class="muted">Checking your invitation…</p>
<p id="error" class="error" role="alert" hidden></p>
<form id="accept" hidden>
  <dl>
    <dt>Workspace</dt><dd id="inv-workspace"></dd>
    <dt>E-mail</dt><dd id="inv-email"></dd>
    <dt>Role</dt><dd id="inv-role"></dd>
    <dt>Invited by</dt><dd id="inv-by"></dd>
    <dt>Expires</dt><dd id="inv-expires"></dd>
  </dl>
  <label for="name">Your name (optional)</label>
  <input id="name" name="name" maxlength="200" autocomplete="name">
  <p id="current-session" class="error" hidden></p>
  <button id="accept-button" type="submit">Accept invitation</button>
</form>`, 'signup.js')
}

export function loginPage (opts: { identityProvider: boolean }): Page {
  const idpLink = opts.identityProvider
    ? '<p><a href="/api/oauth/login">Sign in with your organization instead</a></p>'
    : ''
  return layout('Sign in', `
<h1>Sign in</h1>
<p id="status" class="muted" hidden></p>
<p id="error" class="error" role="alert" hidden></p>
<form id="confirm" hidden>
  <p>This link signs in to <strong id="link-email"></strong> in the workspace <strong id="link-workspace"></strong>.</p>
  <p id="other-browser" class="error" hidden>This link was requested from another browser or device. Sign in only if
  you asked for it yourself: a link someone sent you signs you in to their account.</p>
  <p id="current-session" class="error" hidden></p>
  <button id="signin-button" type="submit"></button>
</form>
<form id="request-link">
  <label for="email">E-mail address</label>
  <input id="email" name="email" type="email" maxlength="254" autocomplete="email" required>
  <button id="send-button" type="submit">E-mail me a sign-in link</button>
</form>${idpLink}`, 'login.js')
}

export function setupPage (opts: { pending: boolean }): Page {
  // Set up already: the same message POST /api/setup answers (410 SETUP_COMPLETE), and the way on.
  return layout('Set up your workspace', `
<h1>Set up your workspace</h1>
<p id="status" class="muted"${opts.pending ? ' hidden' : ''}>This service is set up already:
<a href="/login">sign in</a> instead.</p>
<p id="error" class="error" role="alert" hidden></p>
<form id="setup" hidden>
  <p class="muted">The first workspace and its admin: you. Others are invited from there.</p>
  <label for="workspace-name">Workspace name</label>
  <input id="workspace-name" name="workspaceName" maxlength="200" required>
  <label for="email">Your e-mail address</label>
  <input id="email" name="email" type="email" maxlength="254" autocomplete="email" required>
  <label for="name">Your name (optional)</label>
  <input id="name" name="name" maxlength="200" autocomplete="name">
  <p id="current-session" class="error" hidden></p>
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
    return htmlPage(title, STYLE, () => `<main>
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
<h1>Join ${name}</h1>
<p id="status" class="muted" role="status" hidden></p>
<p id="error" class="error" role="alert" hidden></p>
<form id="join">
  <p class="muted">We e-mail you a link to confirm your address first.</p>
  ${next}
  <label for="email">Your e-mail address</label>
  <input id="email" name="email" type="email" maxlength="254" autocomplete="email" required>
  <label for="name">Your name (optional)</label>
  <input id="name" name="name" maxlength="200" autocomplete="name">
  <button id="join-button" type="submit">E-mail me a link to ${approval ? 'ask to join' : 'join'}</button>
</form>
<form id="confirm" hidden>
  <p>This link confirms <strong id="confirm-email"></strong> <span id="confirm-outcome"></span>
  <strong>${name}</strong>.</p>
  <p id="other-browser" class="error" hidden>This link was requested from another browser or device. Confirm only if
  you asked for it yourself: a link someone sent you signs you in to their new account.</p>
  ${next}
  <p id="current-session" class="error" hidden></p>
  <button id="confirm-button" type="submit"></button>
</form>
</main>`, 'join.js')
}
