// The domain join page: preview the join link named by ?token=…, then join (or ask to) on confirm.
'use strict'

;(() => {
  const token = new URLSearchParams(location.search).get('token') ?? ''
  const status = byId('status')
  const form = byId('join')
  let workspaceName = ''

  ;(async () => {
    if (token === '') {
      status.hidden = true
      show('error', word('needsLink'))
      return
    }
    const r = await postJson('/api/domain-joins/preview', { token })
    status.hidden = true
    if (!r.ok) { show('error', errorText(r)); return }
    const auto = r.body.policy === 'auto_join'
    byId('join-workspace').textContent = r.body.workspace.name
    byId('join-email').textContent = r.body.email
    byId('join-domain').textContent = r.body.domain
    const names = { workspace: r.body.workspace.name, email: r.body.email }
    byId('join-outcome').textContent = word(auto ? 'autoOutcome' : 'askOutcome')
    byId('join-button').textContent = word(auto ? 'joinAs' : 'askToJoin', names)
    workspaceName = r.body.workspace.name
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
    show('status', word('requested', { workspace: workspaceName }))
  })
})()
