// @ts-check
// Shared by the page scripts (a classic script, loaded first: its functions are globals).
/* exported postJson, show, errorText, byId, inputById, onSubmit, showCurrentSession */
'use strict'

/**
 * The element with this id; the pages are ours, so a missing one is a bug, not a state.
 * @param {string} id
 * @returns {HTMLElement}
 */
function byId (id) {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`#${id} is missing from the page`)
  return el
}

/**
 * @param {string} id
 * @returns {HTMLInputElement | HTMLButtonElement}
 */
function inputById (id) {
  return /** @type {HTMLInputElement | HTMLButtonElement} */ (byId(id))
}

/**
 * POST JSON to the service.
 * @param {string} url
 * @param {unknown} body
 * @returns {Promise<{ ok: boolean, status: number, body: any }>}
 */
async function postJson (url, body) {
  const res = await fetch(
    url,
    {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body)
    }
  )
  let data = null
  try { data = await res.json() } catch {}
  return { ok: res.ok, status: res.status, body: data }
}

/**
 * @param {string} id
 * @param {string} text
 */
function show (id, text) {
  const el = byId(id)
  el.textContent = text
  el.hidden = false
}

/**
 * The service's own message (ErrorResponse.message), or a generic one.
 * @param {{ status: number, body: any }} r
 * @returns {string}
 */
function errorText (r) {
  if (r.body && typeof r.body.message === 'string') return r.body.message
  return 'Something went wrong (' + r.status + '). Try again.'
}

/**
 * A form's submit, sent once at a time: the button disabled and the last error hidden while
 * `send` runs, the button enabled again after (a page that navigates away leaves it so).
 * @param {HTMLElement} form
 * @param {string} buttonId
 * @param {() => Promise<void>} send
 */
function onSubmit (form, buttonId, send) {
  form.addEventListener('submit', async event => {
    event.preventDefault()
    const button = inputById(buttonId)
    button.disabled = true
    byId('error').hidden = true
    try { await send() } finally { button.disabled = false }
  })
}

/**
 * A page that signs this browser in never replaces a session silently: when the browser is signed
 * in already (to another account than `next`, the one the page would sign in as; any account when
 * `next` is null), #current-session says whose session continuing ends.
 * @param {string | null} next
 */
async function showCurrentSession (next) {
  const el = byId('current-session')
  let me = null
  try {
    const res = await fetch('/api/users/me', { credentials: 'same-origin' })
    if (res.ok) me = await res.json()
  } catch {}
  if (me === null || (next !== null && me.user.email === next)) { el.hidden = true; return }
  el.textContent = 'This browser is signed in as ' + me.user.email + ' (' + me.workspace.name + '). ' +
    'Continuing signs it out of that account' + (next === null ? '.' : ' and in as ' + next + '.')
  el.hidden = false
}
