// @ts-check
// Shared by the page scripts (a classic script, loaded first: its functions are globals).
/* exported postJson, show, errorText, byId, inputById, onSubmit */
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
