// @ts-check
// The login page: ask for a sign-in link, or complete one (?token=…).
/* global byId, inputById, postJson, show, errorText */
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const form = byId('request-link')

  ;(async () => {
    if (token === '') return
    form.hidden = true
    show('status', 'Signing you in…')
    const r = await postJson('/api/auth/verify', { token })
    if (r.ok) { location.replace('/'); return }
    byId('status').hidden = true
    show('error', errorText(r))
    form.hidden = false
  })()

  form.addEventListener('submit', async event => {
    event.preventDefault()
    const button = inputById('send-button')
    button.disabled = true
    byId('error').hidden = true
    const r = await postJson('/api/auth/login-link', { email: inputById('email').value })
    button.disabled = false
    if (r.ok) show('status', r.body.message)
    else show('error', errorText(r))
  })
})()
