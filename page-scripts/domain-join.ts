// The domain join page: preview the join link named by ?token=…, then join (or ask to) on confirm.
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const status = byId('status')
  const form = byId('join')

  ;(async () => {
    if (token === '') {
      status.hidden = true
      show('error', 'This page needs the link from your e-mail.')
      return
    }
    const r = await postJson('/api/domain-joins/preview', { token })
    status.hidden = true
    if (!r.ok) { show('error', errorText(r)); return }
    const auto = r.body.policy === 'auto_join'
    byId('join-workspace').textContent = r.body.workspace.name
    byId('join-email').textContent = r.body.email
    byId('join-domain').textContent = r.body.domain
    byId('join-outcome').textContent = auto
      ? 'You join as a member and are signed in.'
      : 'The workspace\'s admins are asked; if they approve, an invitation is e-mailed to you.'
    byId('join-button').textContent = auto
      ? 'Join ' + r.body.workspace.name + ' as ' + r.body.email
      : 'Ask to join ' + r.body.workspace.name
    byId('other-browser').hidden = r.body.sameBrowser
    // Only a join signs in: asking the admins leaves this browser as it is.
    if (auto) await showCurrentSession(r.body.email)
    form.hidden = false
  })()

  onSubmit(form, 'join-button', async () => {
    const name = inputById('name').value.trim()
    const r = await postJson('/api/domain-joins', name === '' ? { token } : { token, name })
    if (!r.ok) { show('error', errorText(r)); return }
    // 201: joined and signed in; 202: the admins are asked.
    if (r.status === 201) { location.assign('/'); return }
    form.hidden = true
    show('status', r.body.message)
  })
})()
