// The login page: the address first (to its SSO provider, or an e-mailed sign-in link), or complete
// a link (?token=…).
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
    show('status', word('checkingLink'))
    const r = await postJson('/api/auth/login-link/preview', { token })
    byId('status').hidden = true
    if (!r.ok) { show('error', errorText(r)); form.hidden = false; return }
    byId('link-email').textContent = r.body.email
    byId('link-workspace').textContent = r.body.workspace.name
    byId('signin-button').textContent = word('signInAs', { email: r.body.email })
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
  // Today's step: e-mail a sign-in link. At a domain that signs in by SSO it is refused (the code
  // says so, not the words), and a workspace admin may still ask (break-glass).
  const emailLink = async (email: string) => {
    const r = await postJson('/api/auth/login-link', { email })
    if (r.ok) { show('status', word('linkSent')); return }
    show('error', errorText(r))
    breakGlass.hidden = r.body?.code !== 'SSO_REQUIRED'
  }

  // The address first: to its provider when an SSO connection serves its domain, else the link.
  // The start answers 302 to the provider or 404; fetched with redirect: 'manual', the 302 comes
  // back as an opaque redirect, not followed (the provider is another origin; connect-src is
  // 'self'). The page then navigates to the start itself, which begins a fresh sign-in for this
  // browser: the provider's URL of the first answer cannot be read. Any other answer (no
  // connection, the provider unreachable, the rate limit) takes the e-mailed link's way, whose
  // own answer then says what applies.
  onSubmit(form, 'continue-button', async () => {
    breakGlass.hidden = true
    const email = inputById('email').value
    const start = '/api/oauth/sso?email=' + encodeURIComponent(email)
    let sso = false
    try {
      sso = (await fetch(start, { redirect: 'manual', credentials: 'same-origin' })).type === 'opaqueredirect'
    } catch {}
    if (!sso) { await emailLink(email); return }
    show('status', word('toProvider'))
    location.assign(start)
  })

  onSubmit(form, 'send-button', async () => {
    breakGlass.hidden = true
    await emailLink(inputById('email').value)
  })

  onSubmit(breakGlass, 'break-glass-button', async () => {
    const r = await postJson('/api/auth/login-link', { email: inputById('email').value, breakGlass: true })
    if (!r.ok) { show('error', errorText(r)); return }
    breakGlass.hidden = true
    show('status', word('linkSent'))
  })
})()
