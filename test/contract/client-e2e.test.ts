import t from 'tap'
import createClient from 'openapi-fetch'
import type { paths } from '../../src/generated/openapi.js'
import { build } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'

// What a contract-first consumer does: a typed client generated from openapi.yaml
// (openapi-typescript → `paths`, openapi-fetch at run time) against a listening service, over
// real HTTP on loopback. The admin invites, lists, revokes, invites again; the invitee signs up.

/** A fetch that keeps cookies like a browser would (one jar per person), for openapi-fetch. */
function cookieFetch (): { fetch: (input: Request) => Promise<Response>, jar: Map<string, string> } {
  const jar = new Map<string, string>()
  return {
    jar,
    async fetch (input) {
      const headers = new Headers(input.headers)
      if (jar.size > 0) headers.set('cookie', [...jar].map(([k, v]) => `${k}=${v}`).join('; '))
      const res = await fetch(new Request(input, { headers }))
      for (const line of res.headers.getSetCookie()) {
        const [pair = '', ...attrs] = line.split(';')
        const eq = pair.indexOf('=')
        const name = pair.slice(0, eq).trim()
        const value = pair.slice(eq + 1).trim()
        // A cleared cookie (Max-Age=0 or an Expires in the past) leaves the jar.
        const cleared = value === '' || attrs.some(a => /^\s*max-age=0\s*$/i.test(a))
        if (cleared) jar.delete(name)
        else jar.set(name, value)
      }
      return res
    }
  }
}

function tokenOf (url: string | undefined): string {
  return new URL(url ?? 'http://x/').searchParams.get('token') ?? ''
}

t.test('generated client: invite, list, revoke, invite again, the invitee signs up', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, APP_URL: 'https://app.example.test' } })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const baseUrl = `http://127.0.0.1:${port}`

  const admin = await h.signIn({ role: 'admin', workspaceName: 'Client Co' })
  const adminJar = cookieFetch()
  adminJar.jar.set('service_session', admin.cookie.replace(/^service_session=/, ''))
  const api = createClient<paths>({ baseUrl, fetch: adminJar.fetch })

  const me = await api.GET('/api/users/me')
  t.equal(me.response.status, 200)
  t.equal(me.data?.user.role, 'admin', 'the session cookie travels through the wrapper')

  // Invite on the fallback path: our own e-mail through the SMTP peer.
  const first = await api.POST('/api/users/invite', { body: { email: 'first@example.com', role: 'member' } })
  t.equal(first.response.status, 200)
  t.equal(first.data?.success, true)
  t.match(first.data?.invitationUrl, /^https:\/\/app\.example\.test\/signup\?token=/)
  const mail1 = await smtp.nextMessage(0)
  t.same(mail1.to, ['first@example.com'])
  t.ok(mail1.text.includes(first.data?.invitationUrl ?? '#'), 'the e-mail carries the same link')

  const listed = await api.GET('/api/invitations', { params: { query: { status: 'pending' } } })
  t.equal(listed.response.status, 200)
  const pending = listed.data?.items ?? []
  t.same(pending.map(i => i.email), ['first@example.com'])
  const firstId = pending[0]?.id ?? ''

  const revoked = await api.DELETE('/api/invitations/{invitationId}', { params: { path: { invitationId: firstId } } })
  t.equal(revoked.response.status, 200)
  t.equal(revoked.data?.status, 'revoked')
  t.equal(revoked.data?.id, firstId)

  const again = await api.DELETE('/api/invitations/{invitationId}', { params: { path: { invitationId: firstId } } })
  t.equal(again.response.status, 409, 'revoking twice is a conflict')
  t.equal(again.error?.code, 'INVITATION_NOT_PENDING', 'errors arrive typed as ErrorResponse')

  const second = await api.POST('/api/users/invite', { body: { email: 'second@example.com', role: 'member' } })
  t.equal(second.response.status, 200)
  const mail2 = await smtp.nextMessage(1)
  t.same(mail2.to, ['second@example.com'])

  // The invitee: a different person with an empty cookie jar.
  const inviteeJar = cookieFetch()
  const invitee = createClient<paths>({ baseUrl, fetch: inviteeJar.fetch })
  const dead = await invitee.POST('/api/auth/signup', { body: { token: tokenOf(first.data?.invitationUrl) } })
  t.ok(
    dead.response.status === 410 || dead.response.status === 400,
    `the revoked invitation's link no longer works (${dead.response.status})`
  )
  t.notOk(inviteeJar.jar.has('service_session'), 'and sets no session')

  const preview = await invitee.POST('/api/auth/invitation', { body: { token: tokenOf(second.data?.invitationUrl) } })
  t.equal(preview.response.status, 200)
  t.equal(preview.data?.workspace.name, 'Client Co')

  const signup = await invitee.POST(
    '/api/auth/signup', { body: { token: tokenOf(second.data?.invitationUrl), name: 'Second Person' } }
  )
  t.equal(signup.response.status, 201)
  t.equal(signup.data?.user.email, 'second@example.com')
  t.equal(signup.data?.user.role, 'member')
  t.equal(signup.data?.workspace.id, admin.workspaceId, 'joined the inviting workspace')
  t.ok(inviteeJar.jar.has('service_session'), 'signup set the session cookie')

  const inviteeMe = await invitee.GET('/api/users/me')
  t.equal(inviteeMe.response.status, 200)
  t.equal(inviteeMe.data?.user.name, 'Second Person', 'the invitee is signed in')
  const forbidden = await invitee.GET('/api/invitations')
  t.equal(forbidden.response.status, 403, 'a member cannot list invitations')

  const all = await api.GET('/api/invitations')
  const statuses = Object.fromEntries((all.data?.items ?? []).map(i => [i.email, i.status]))
  t.same(statuses, { 'first@example.com': 'revoked', 'second@example.com': 'accepted' })

  const logout = await invitee.POST('/api/auth/logout')
  t.equal(logout.response.status, 204)
  t.notOk(inviteeJar.jar.has('service_session'), 'logout clears the cookie')
  const after = await invitee.GET('/api/users/me')
  t.equal(after.response.status, 401)
})
