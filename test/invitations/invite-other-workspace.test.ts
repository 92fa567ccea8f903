import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invite } from '../helpers/invite.js'

// Tenant side channel: inviting an address whose account is in another workspace answered
// 409 USER_EXISTS, telling the inviter that the address has an account there. The answer is now
// decided by the inviting workspace alone: a person from elsewhere is invited exactly like a
// stranger, and only they learn, when accepting, that their address already has an account.

t.test('inviting another workspace\'s person answers as for a stranger; acceptance fails for them alone', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const elsewhere = await h.signIn({ role: 'member', email: 'taken@example.com' })
  t.not(elsewhere.workspaceId, admin.workspaceId)
  const stranger = await invite(h, admin.cookie, { email: 'nobody@example.com' })
  const other = await invite(h, admin.cookie, { email: 'taken@example.com' })
  assertContract(t, 'POST', '/api/users/invite', other)
  t.equal(other.statusCode, stranger.statusCode, `same status as a stranger's (${stranger.statusCode})`)
  t.same(Object.keys(other.json()).sort(), Object.keys(stranger.json()).sort(), 'same shape')
  const again = await invite(h, admin.cookie, { email: 'taken@example.com' })
  t.equal(again.statusCode, 200, 're-inviting re-sends it, like any other')
  const token = new URL(again.json().invitationUrl).searchParams.get('token')
  const accept = await h.inject({
    method: 'POST', url: '/api/auth/signup', headers: { 'content-type': 'application/json' }, payload: { token }
  })
  assertContract(t, 'POST', '/api/auth/signup', accept)
  t.equal(accept.statusCode, 409, 'the person, accepting, learns their address already has an account')
  t.equal(accept.json().code, 'USER_EXISTS')

  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'inside@example.com' })
  const own = await invite(h, admin.cookie, { email: member.email })
  t.equal(own.statusCode, 409, 'a member of the inviting workspace is still USER_EXISTS')
  t.equal(own.json().code, 'USER_EXISTS')
})
