// @ts-check
// The landing page: who is signed in, and a sign-out button.
/* global byId */
'use strict'

;(async () => {
  const status = byId('status')
  const res = await fetch('/api/users/me', { credentials: 'same-origin' })
  if (res.ok) {
    const me = await res.json()
    status.textContent = 'Signed in as ' + me.user.email
    byId('me-email').textContent = me.user.email
    byId('me-name').textContent = me.user.name ?? '—'
    byId('me-role').textContent = me.user.role
    byId('me-workspace').textContent = me.workspace.name
    byId('signed-in').hidden = false
  } else {
    status.textContent = res.status === 401
      ? 'You are not signed in.'
      : 'Could not load your account (' + res.status + ').'
    byId('signed-out').hidden = false
  }
})()

byId('logout').addEventListener('click', async () => {
  // No body and no content-type: the operation takes none.
  await fetch('/api/auth/logout', { method: 'POST', credentials: 'same-origin' }).catch(() => {})
  location.reload()
})
