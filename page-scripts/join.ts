// An invite link's page (/join/{code}): ask for a confirmation link, or (?confirm=…) confirm it.
'use strict'

;(() => {
  const code = decodeURIComponent(location.pathname.split('/').pop() ?? '')
  const token = new URLSearchParams(location.search).get('confirm') ?? ''
  const form = byId('join')
  const confirm = byId('confirm')

  // The e-mailed link never joins by being opened (mail scanners open links, and a page on any
  // site can open /join/{code}?confirm=<its own confirmation> in this browser): the page names the
  // address it confirms, says when it was asked for in another browser and whose session joining
  // would end, and confirms only on the person's click.
  ;(async () => {
    if (token === '') return
    form.hidden = true
    show('status', word('checkingLink'))
    const r = await postJson('/api/join/{code}/confirm/preview', { token }, { code })
    byId('status').hidden = true
    if (!r.ok) { show('error', errorText(r)); return }
    const approval = r.body.requiresApproval
    const email = document.createElement('strong')
    email.id = 'confirm-email'
    email.textContent = r.body.email
    fillWords(byId('confirm-text'), approval ? 'confirmsAsk' : 'confirmsJoin', { email })
    byId('confirm-button').textContent = word(approval ? 'confirmAndAsk' : 'joinAs', { email: r.body.email })
    byId('other-browser').hidden = r.body.sameBrowser
    // Asking the admins signs nobody in.
    if (!approval) await showCurrentSession(r.body.email)
    confirm.hidden = false
  })()

  onSubmit(confirm, 'confirm-button', async () => {
    const r = await postJson('/api/join/{code}/confirm', { token }, { code })
    if (r.ok && r.status === 201) { location.replace('/'); return }
    confirm.hidden = true
    if (r.ok) show('status', word('requested'))
    else show('error', errorText(r))
  })

  onSubmit(form, 'join-button', async () => {
    const name = inputById('name').value.trim()
    const r = await postJson('/api/join/{code}', {
      email: inputById('email').value.trim(),
      ...(name !== '' ? { name } : {})
    }, { code })
    if (r.ok) { form.hidden = true; show('status', word('linkSent')) } else show('error', errorText(r))
  })
})()
