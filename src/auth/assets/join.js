// @ts-check
// An invite link's page (/join/{code}): ask for a confirmation link, or (?confirm=…) confirm it.
/* global byId, inputById, postJson, show, errorText, onSubmit */
'use strict'

;(() => {
  const code = encodeURIComponent(decodeURIComponent(location.pathname.split('/').pop() ?? ''))
  const token = new URLSearchParams(location.search).get('confirm') ?? ''
  const form = byId('join')
  const confirm = byId('confirm')

  // The e-mailed link never joins by being opened (mail scanners open links): the page asks for
  // the person's click, which posts the token.
  if (token !== '') {
    form.hidden = true
    confirm.hidden = false
  }

  onSubmit(confirm, 'confirm-button', async () => {
    const r = await postJson(`/api/join/${code}/confirm`, { token })
    if (r.status === 201) { location.replace('/'); return }
    confirm.hidden = true
    if (r.ok) show('status', r.body.message)
    else show('error', errorText(r))
  })

  onSubmit(form, 'join-button', async () => {
    const name = inputById('name').value.trim()
    const r = await postJson(`/api/join/${code}`, {
      email: inputById('email').value.trim(),
      ...(name !== '' ? { name } : {})
    })
    if (r.ok) { form.hidden = true; show('status', r.body.message) } else show('error', errorText(r))
  })
})()
