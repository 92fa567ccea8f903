// The login page: ask for a sign-in link, or complete one (?token=…).
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const form = byId('request-link')
  const confirm = byId('confirm')

  // A link never signs in by being opened: a page on any site can open /login?token=<its own
  // link> in this browser. The page names the account the link belongs to, says when the link was
  // asked for in another browser, and signs in only on the person's click.
  ;(async () => {
    if (token === '') return
    form.hidden = true
    show('status', 'Checking your link…')
    const r = await postJson('/api/auth/login-link/preview', { token })
    byId('status').hidden = true
    if (!r.ok) { show('error', errorText(r)); form.hidden = false; return }
    byId('link-email').textContent = r.body.email
    byId('link-workspace').textContent = r.body.workspace.name
    byId('signin-button').textContent = 'Sign in as ' + r.body.email
    byId('other-browser').hidden = r.body.sameBrowser
    await showCurrentSession(r.body.email)
    confirm.hidden = false
  })()

  onSubmit(confirm, 'signin-button', async () => {
    const r = await postJson('/api/auth/verify', { token })
    if (r.ok) { location.replace('/'); return }
    confirm.hidden = true
    show('error', errorText(r))
    form.hidden = false
  })

  const breakGlass = byId('break-glass')
  onSubmit(form, 'send-button', async () => {
    breakGlass.hidden = true
    const r = await postJson('/api/auth/login-link', { email: inputById('email').value })
    if (r.ok) { show('status', r.body.message); return }
    show('error', errorText(r))
    // The domain signs in by SSO (the code says so, not the words): an admin may still ask (break-glass).
    breakGlass.hidden = r.body?.code !== 'SSO_REQUIRED'
  })

  onSubmit(breakGlass, 'break-glass-button', async () => {
    const r = await postJson('/api/auth/login-link', { email: inputById('email').value, breakGlass: true })
    if (!r.ok) { show('error', errorText(r)); return }
    breakGlass.hidden = true
    show('status', r.body.message)
  })
})()
