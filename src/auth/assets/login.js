// @ts-check
// The login page: ask for a sign-in link, or complete one (?token=…).
/* global byId, inputById, postJson, show, errorText, onSubmit */
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

  onSubmit(form, 'send-button', async () => {
    const r = await postJson('/api/auth/login-link', { email: inputById('email').value })
    if (r.ok) show('status', r.body.message)
    else show('error', errorText(r))
  })
})()
