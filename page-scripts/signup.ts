// The signup page: preview the invitation named by ?token=…, then accept it.
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const status = byId('status')
  const form = byId('accept')

  ;(async () => {
    if (token === '') {
      status.hidden = true; show('error', word('needsLink')); return
    }
    const r = await postJson('/api/auth/invitation', { token })
    status.hidden = true
    if (!r.ok) { show('error', errorText(r)); return }
    byId('inv-workspace').textContent = r.body.workspace.name
    byId('inv-email').textContent = r.body.email
    byId('inv-role').textContent = word('role.' + r.body.role)
    byId('inv-by').textContent = r.body.invitedBy ?? '—'
    byId('inv-expires').textContent = new Date(r.body.expiresAt).toLocaleString(document.documentElement.lang, {
      year: 'numeric',
      month: 'long',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
      timeZone: pageTimeZone
    })
    // The button names the account: accepting signs this browser in as that person.
    byId('accept-button').textContent = word('acceptAs', { email: r.body.email })
    await showCurrentSession(r.body.email)
    form.hidden = false
  })()

  onSubmit(form, 'accept-button', async () => {
    const name = inputById('name').value.trim()
    const r = await postJson('/api/auth/signup', name === '' ? { token } : { token, name })
    if (r.ok) { location.assign('/'); return }
    show('error', errorText(r))
  })
})()
