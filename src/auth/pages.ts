import { randomBytes } from 'node:crypto'
import { escapeHtml } from '../lib/html.js'

// The three small HTML pages (/, /signup, /login). Nothing from the request is written into the
// markup: the scripts read the token from location.search and render answers with textContent.
// Each response carries a fresh CSP nonce; only the page's own inline script and style run.

export interface Page { html: string, headers: Record<string, string> }

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#222}
h1{font-size:1.5rem}label{display:block;margin:.75rem 0 .25rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box}
button{font:inherit;margin-top:1rem;padding:.4rem 1rem;cursor:pointer}.error{color:#b00020}.muted{color:#666}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem}dt{font-weight:600}[hidden]{display:none}`

// Shared by the page scripts: POST JSON, resolve to { ok, status, body }.
const CLIENT_HELPERS = `
async function postJson (url, body) {
  const res = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  let data = null
  try { data = await res.json() } catch {}
  return { ok: res.ok, status: res.status, body: data }
}
function show (id, text) { const el = document.getElementById(id); el.textContent = text; el.hidden = false }
function errorText (r) { return (r.body && typeof r.body.message === 'string') ? r.body.message : 'Something went wrong (' + r.status + '). Try again.' }
`

function layout (title: string, body: string, script: string): Page {
  const nonce = randomBytes(16).toString('base64')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
${body}
<script nonce="${nonce}">'use strict';${CLIENT_HELPERS}${script}</script>
</body>
</html>
`
  return {
    html,
    headers: {
      'content-security-policy': `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
      // The signup and login URLs carry tokens: never send them onwards, never cache the page.
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY'
    }
  }
}

export function indexPage (opts: { identityProvider: boolean }): Page {
  const idpLink = opts.identityProvider ? '<p><a href="/api/oauth/login">Sign in with your organization</a></p>' : ''
  return layout('Workspace', `
<h1>Workspace</h1>
<p id="status" class="muted">Checking who is signed in…</p>
<div id="signed-in" hidden>
  <dl>
    <dt>E-mail</dt><dd id="me-email"></dd>
    <dt>Name</dt><dd id="me-name"></dd>
    <dt>Role</dt><dd id="me-role"></dd>
    <dt>Workspace</dt><dd id="me-workspace"></dd>
  </dl>
  <button id="logout" type="button">Sign out</button>
</div>
<div id="signed-out" hidden>
  <p><a href="/login">Sign in with an e-mail link</a></p>${idpLink}
</div>
<p class="muted"><a href="/api/docs">API reference</a></p>`, `
(async () => {
  const status = document.getElementById('status')
  const res = await fetch('/api/users/me', { credentials: 'same-origin' })
  if (res.ok) {
    const me = await res.json()
    status.textContent = 'Signed in as ' + me.user.email
    document.getElementById('me-email').textContent = me.user.email
    document.getElementById('me-name').textContent = me.user.name ?? '—'
    document.getElementById('me-role').textContent = me.user.role
    document.getElementById('me-workspace').textContent = me.workspace.name
    document.getElementById('signed-in').hidden = false
  } else {
    status.textContent = res.status === 401 ? 'You are not signed in.' : 'Could not load your account (' + res.status + ').'
    document.getElementById('signed-out').hidden = false
  }
})()
document.getElementById('logout').addEventListener('click', async () => {
  // No body and no content-type: the operation takes none.
  await fetch('/api/auth/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => {})
  location.reload()
})
`)
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
  <button id="accept-button" type="submit">Accept invitation</button>
</form>`, `
const token = new URLSearchParams(location.search).get('token') ?? ''
const status = document.getElementById('status')
const form = document.getElementById('accept')
;(async () => {
  if (token === '') { status.hidden = true; show('error', 'This page needs the link from your invitation e-mail.'); return }
  const r = await postJson('/api/auth/invitation', { token })
  status.hidden = true
  if (!r.ok) { show('error', errorText(r)); return }
  document.getElementById('inv-workspace').textContent = r.body.workspace.name
  document.getElementById('inv-email').textContent = r.body.email
  document.getElementById('inv-role').textContent = r.body.role
  document.getElementById('inv-by').textContent = r.body.invitedBy ?? '—'
  document.getElementById('inv-expires').textContent = new Date(r.body.expiresAt).toLocaleString()
  form.hidden = false
})()
form.addEventListener('submit', async event => {
  event.preventDefault()
  const button = document.getElementById('accept-button')
  button.disabled = true
  const name = document.getElementById('name').value.trim()
  const r = await postJson('/api/auth/signup', name === '' ? { token } : { token, name })
  if (r.ok) { location.assign('/'); return }
  button.disabled = false
  show('error', errorText(r))
})
`)
}

export function loginPage (opts: { identityProvider: boolean }): Page {
  const idpLink = opts.identityProvider ? '<p><a href="/api/oauth/login">Sign in with your organization instead</a></p>' : ''
  return layout('Sign in', `
<h1>Sign in</h1>
<p id="status" class="muted" hidden></p>
<p id="error" class="error" role="alert" hidden></p>
<form id="request-link">
  <label for="email">E-mail address</label>
  <input id="email" name="email" type="email" maxlength="254" autocomplete="email" required>
  <button id="send-button" type="submit">E-mail me a sign-in link</button>
</form>${idpLink}`, `
const token = new URLSearchParams(location.search).get('token') ?? ''
const form = document.getElementById('request-link')
;(async () => {
  if (token === '') return
  form.hidden = true
  show('status', 'Signing you in…')
  const r = await postJson('/api/auth/verify', { token })
  if (r.ok) { location.replace('/'); return }
  document.getElementById('status').hidden = true
  show('error', errorText(r))
  form.hidden = false
})()
form.addEventListener('submit', async event => {
  event.preventDefault()
  const button = document.getElementById('send-button')
  button.disabled = true
  document.getElementById('error').hidden = true
  const r = await postJson('/api/auth/login-link', { email: document.getElementById('email').value })
  button.disabled = false
  if (r.ok) show('status', r.body.message)
  else show('error', errorText(r))
})
`)
}
