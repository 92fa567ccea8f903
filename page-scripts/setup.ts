// The first-run page: the token comes from the link the service logged (?token=…); the form
// creates the workspace and its first admin, who lands on / signed in.
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const form = byId('setup')
  // The server rendered the "set up already" message: nothing to offer.
  if (!byId('status').hidden) return
  if (token === '') {
    show('error', word('needsLink'))
    return
  }
  form.hidden = false
  // No workspace yet means no account to be signed in to; a browser still signed in elsewhere is told.
  showCurrentSession(null).catch(() => {})

  onSubmit(form, 'setup-button', async () => {
    const name = inputById('name').value.trim()
    const body = { token, workspaceName: inputById('workspace-name').value, email: inputById('email').value.trim() }
    const r = await postJson('/api/setup', name === '' ? body : { ...body, name })
    if (r.ok) { location.assign('/'); return }
    if (r.status === 410) {
      // Someone finished the setup first (or create-admin ran): the form has nothing left to do.
      form.hidden = true
      show('status', errorText(r))
      return
    }
    show('error', errorText(r))
  })
})()
