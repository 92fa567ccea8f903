import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { buildWithSlack, install } from '../helpers/slack.js'
import type { SignedIn } from '../helpers/build.js'

// What a member may do about inviting, through REST, as the workspace's invite policy says
// (POST /api/users/invite, POST /api/invite-requests, GET /api/invite-requests/mine), the
// invite-request events on the feed, and an admin uninstalling Slack (DELETE /api/workspace/slack)
// against the loopback fake of Slack. One app for the file (PGlite, or PostgreSQL with
// TEST_DATABASE_URL).

type Policy = 'admins' | 'request' | 'members'

t.test('member invites, requests and the Slack uninstall', async t => {
  const smtp = await startSmtp(t)
  const { h, slack } = await buildWithSlack(t, { env: { SMTP_URL: smtp.url, INVITE_REQUESTS_PER_MEMBER: '3' } })
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Acme', email: 'ada@example.com' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'grace@example.com' })
  const other = await h.signIn({ role: 'member', workspaceId: admin.workspaceId, email: 'linus@example.com' })

  const post = async (url: string, who: SignedIn, payload: unknown, headers: Record<string, string> = {}) =>
    await h.inject({ method: 'POST', url, headers: { cookie: who.cookie, ...headers }, payload: payload as Record<string, unknown> })
  const setPolicy = async (invitePolicy: Policy) => {
    const res = await h.inject({
      method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy }
    })
    t.equal(res.statusCode, 200, `policy ${invitePolicy}`)
  }
  const checked = (method: string, url: string, res: LightMyRequestResponse) => {
    assertContract(t, method, url, res)
    return res
  }

  await t.test('the policy matrix: admins / request / members × member / admin caller × wanted role', async t => {
    // [policy, caller, wanted role] → status of a direct invitation, status of a request.
    const expected: Array<[Policy, 'member' | 'admin', 'member' | 'admin', number, number]> = [
      ['admins', 'member', 'member', 403, 403],
      ['admins', 'member', 'admin', 403, 403],
      ['admins', 'admin', 'member', 200, 403],
      ['admins', 'admin', 'admin', 200, 403],
      ['request', 'member', 'member', 403, 201],
      ['request', 'member', 'admin', 403, 201],
      ['request', 'admin', 'member', 200, 403],
      ['request', 'admin', 'admin', 200, 403],
      ['members', 'member', 'member', 200, 403],
      ['members', 'member', 'admin', 403, 403],
      ['members', 'admin', 'member', 200, 403],
      ['members', 'admin', 'admin', 200, 403]
    ]
    let n = 0
    for (const [policy, caller, role, inviteStatus, requestStatus] of expected) {
      await setPolicy(policy)
      const who = caller === 'admin' ? admin : member
      const label = `${policy}, ${caller} for a${role === 'admin' ? 'n' : ''} ${role}`
      const invited = checked('POST', '/api/users/invite',
        await post('/api/users/invite', who, { email: `invite-${++n}@example.com`, role }))
      t.equal(invited.statusCode, inviteStatus, `${label}: invite → ${inviteStatus}`)
      const asked = checked('POST', '/api/invite-requests',
        await post('/api/invite-requests', who, { email: `ask-${n}@example.com`, role }))
      t.equal(asked.statusCode, requestStatus, `${label}: request → ${requestStatus}`)
      for (const res of [invited, asked].filter(r => r.statusCode === 403)) {
        t.match(res.json(), { code: 'INVITE_NOT_ALLOWED', details: { invitePolicy: policy } }, `${label}: refused in words`)
      }
    }
    // Requests made in the matrix are pending (the cap is 3): decided, so the next tests start clean.
    await h.db.query("UPDATE invite_requests SET status = 'denied' WHERE status = 'pending'")

    // What each refusal says, as a person reads it.
    await setPolicy('admins')
    t.match((await post('/api/users/invite', member, { email: 'x1@example.com', role: 'member' })).json().message,
      /\(admins\) does not allow this: only admins invite people to this workspace; ask one of its admins/)
    await setPolicy('members')
    t.match((await post('/api/users/invite', member, { email: 'x2@example.com', role: 'admin' })).json().message,
      /only admins invite admins/)
    t.match((await post('/api/invite-requests', member, { email: 'x3@example.com', role: 'member' })).json().message,
      /members invite members themselves here/)
    await setPolicy('request')
    t.match((await post('/api/users/invite', member, { email: 'x4@example.com', role: 'member' })).json().message,
      /file an invite request \(POST \/api\/invite-requests\)/)
    t.match((await post('/api/invite-requests', admin, { email: 'x5@example.com', role: 'member' })).json().message,
      /admins invite people themselves/)
  })

  await t.test('a member invites under "members": audited with door web, the inviter is the member', async t => {
    await setPolicy('members')
    const seen = smtp.messages.length
    const res = checked('POST', '/api/users/invite', await post('/api/users/invite', member, { email: 'newbie@example.com', role: 'member' }))
    t.equal(res.statusCode, 200)
    t.match((await smtp.nextMessage(seen)).to, ['newbie@example.com'], 'the invitation was e-mailed')
    const audit = await h.inject({ url: '/api/audit-events?action=invitation.created&limit=100', headers: { cookie: admin.cookie } })
    type Row = { actor: { id: string | null }, source: string, payload: { email: string } }
    const row = (audit.json().items as Row[])
      .find(e => e.payload.email === 'newbie@example.com')
    t.match(row, { actor: { id: member.userId }, source: 'web' }, 'who invited, through which door')
    const list = await h.inject({ url: '/api/invitations?status=pending&limit=100', headers: { cookie: admin.cookie } })
    t.match((list.json().items as Array<{ email: string }>).find(i => i.email === 'newbie@example.com'),
      { inviter: { email: member.email, source: 'web' } })
    const crossSite = await post('/api/users/invite', member, { email: 'csrf@example.com', role: 'member' }, { 'sec-fetch-site': 'cross-site' })
    t.equal(checked('POST', '/api/users/invite', crossSite).statusCode, 403)
    t.equal(crossSite.json().code, 'CSRF_REJECTED', 'another site cannot invite in the member\'s name')
  })

  let requestId = ''
  await t.test('under "request": a request, deduplicated, capped, listed as the member\'s own, evented', async t => {
    await setPolicy('request')
    h.clock.advance(1000) // newer than the matrix's requests: newest first is then well defined
    const created = checked('POST', '/api/invite-requests', await post('/api/invite-requests', member, { email: 'Kim@Example.com', role: 'member' }))
    t.equal(created.statusCode, 201)
    t.match(created.json(), { email: 'kim@example.com', role: 'member', status: 'pending', requestedBy: member.userId })
    requestId = created.json().id
    const again = checked('POST', '/api/invite-requests', await post('/api/invite-requests', member, { email: 'kim@example.com', role: 'admin' }))
    t.equal(again.statusCode, 200, 'asking again answers the pending request')
    t.equal(again.json().id, requestId)
    const byOther = await post('/api/invite-requests', other, { email: 'kim@example.com', role: 'member' })
    t.equal(byOther.statusCode, 200, 'another member asking for the same address: the same request')
    t.equal(byOther.json().id, requestId)

    const exists = checked('POST', '/api/invite-requests', await post('/api/invite-requests', member, { email: other.email, role: 'member' }))
    t.match([exists.statusCode, exists.json().code], [409, 'USER_EXISTS'])
    const invalid = checked('POST', '/api/invite-requests', await post('/api/invite-requests', member, { email: 'not-an-address', role: 'member' }))
    t.match([invalid.statusCode, invalid.json().code], [400, 'VALIDATION_FAILED'])
    const unsigned = await h.inject({ method: 'POST', url: '/api/invite-requests', payload: { email: 'z@example.com', role: 'member' } })
    t.equal(checked('POST', '/api/invite-requests', unsigned).statusCode, 401)

    // The cap (INVITE_REQUESTS_PER_MEMBER=3 here), as Slack's requests have it.
    for (const email of ['cap-1@example.com', 'cap-2@example.com']) {
      h.clock.advance(1000)
      t.equal((await post('/api/invite-requests', member, { email, role: 'member' })).statusCode, 201)
    }
    const capped = checked('POST', '/api/invite-requests', await post('/api/invite-requests', member, { email: 'cap-3@example.com', role: 'member' }))
    t.match([capped.statusCode, capped.json().code], [409, 'INVITE_REQUEST_LIMIT_REACHED'])

    // Mine: the member's own, newest first, paged; nobody else's.
    const mine = checked('GET', '/api/invite-requests/mine', await h.inject({ url: '/api/invite-requests/mine?limit=2', headers: { cookie: member.cookie } }))
    t.equal(mine.statusCode, 200)
    t.same((mine.json().items as Array<{ email: string }>).map(r => r.email), ['cap-2@example.com', 'cap-1@example.com'])
    const page2 = checked('GET', '/api/invite-requests/mine', await h.inject({ url: `/api/invite-requests/mine?limit=2&cursor=${mine.json().nextCursor as string}`, headers: { cookie: member.cookie } }))
    t.equal((page2.json().items as Array<{ email: string }>)[0]?.email, 'kim@example.com', 'the next page')
    const others = await h.inject({ url: '/api/invite-requests/mine?status=pending', headers: { cookie: other.cookie } })
    t.same(others.json().items, [], 'the other member asked for nothing of their own')
    const bad = await h.inject({ url: '/api/invite-requests/mine?status=nope', headers: { cookie: member.cookie } })
    t.equal(checked('GET', '/api/invite-requests/mine', bad).statusCode, 400)
    t.equal(checked('GET', '/api/invite-requests/mine', await h.inject({ url: '/api/invite-requests/mine' })).statusCode, 401)
    const all = await h.inject({ url: '/api/invite-requests?status=pending', headers: { cookie: member.cookie } })
    t.equal(all.statusCode, 403, 'the workspace\'s whole list stays the admins\'')

    const audit = await h.inject({ url: '/api/audit-events?action=invite_request.created&limit=100', headers: { cookie: admin.cookie } })
    t.match((audit.json().items as Array<{ target: { id: string } | null }>).find(e => e.target?.id === requestId), { source: 'web', actor: { id: member.userId } },
      'audited through the web door')
  })

  await t.test('a request\'s life is on the events feed: created, approved, denied', async t => {
    const feed = async () => {
      const res = await h.inject({
        url: '/api/events?types=invite_request.created&types=invite_request.approved&types=invite_request.denied&limit=100',
        headers: { cookie: admin.cookie }
      })
      t.equal(res.statusCode, 200)
      assertContract(t, 'GET', '/api/events', res)
      return res.json().items as Array<{ type: string, source: string, data: Record<string, unknown> }>
    }
    const approved = await post(`/api/invite-requests/${requestId}/approve`, admin, { role: 'admin' })
    t.equal(approved.statusCode, 200)
    const denied = await post('/api/invite-requests/' + (await h.inject({
      url: '/api/invite-requests/mine?status=pending&limit=1', headers: { cookie: member.cookie }
    })).json().items[0].id + '/deny', admin, {})
    t.equal(denied.statusCode, 200, 'denied without a reason')
    const deniedWithReason = await post('/api/invite-requests/' + (await h.inject({
      url: '/api/invite-requests/mine?status=pending&limit=1', headers: { cookie: member.cookie }
    })).json().items[0].id + '/deny', admin, { reason: 'not now' })
    t.equal(deniedWithReason.statusCode, 200)

    const events = await feed()
    t.match(events.find(e => e.type === 'invite_request.created' && e.data.inviteRequestId === requestId),
      { source: 'web', data: { email: 'kim@example.com', role: 'member' } }, 'created, with the request\'s id')
    t.match(events.find(e => e.type === 'invite_request.approved'),
      { source: 'web', data: { inviteRequestId: requestId, email: 'kim@example.com', role: 'admin' } }, 'approved with the role chosen')
    const denials = events.filter(e => e.type === 'invite_request.denied')
    t.equal(denials.length, 2)
    t.notOk('reason' in (denials[0]?.data ?? {}), 'no reason given: none in the event')
    t.equal(denials[1]?.data.reason, 'not now')

    const mine = await h.inject({ url: '/api/invite-requests/mine?limit=10', headers: { cookie: member.cookie } })
    type Mine = { email: string, status: string, reason: string | null }
    t.same((mine.json().items as Mine[]).slice(0, 3).map(r => [r.email, r.status, r.reason]), [
      ['cap-2@example.com', 'denied', null], ['cap-1@example.com', 'denied', 'not now'], ['kim@example.com', 'approved', null]
    ], 'the member sees what became of each')

    const hook = await h.inject({
      method: 'POST',
      url: '/api/webhook-endpoints',
      headers: { cookie: admin.cookie },
      payload: { url: 'https://hooks.example.com/requests', eventTypes: ['invite_request.created', 'invite_request.denied'] }
    })
    t.equal(hook.statusCode, 201, 'a webhook endpoint subscribes to the request events')
  })

  await t.test('DELETE /api/workspace/slack: revoked at Slack, deleted, chat.uninstalled', async t => {
    const URL = '/api/workspace/slack'
    const del = async (who: SignedIn) => checked('DELETE', URL, await h.inject({ method: 'DELETE', url: URL, headers: { cookie: who.cookie } }))
    const settings = async () => (await h.inject({ url: '/api/workspace/settings', headers: { cookie: admin.cookie } })).json().slack

    const none = await del(admin)
    t.match([none.statusCode, none.json().code], [404, 'NOT_FOUND'], 'nothing installed: 404')
    t.equal((await install(h, admin)).statusCode, 302)
    t.match(await settings(), { installed: true, teamName: 'Acme on Slack' })
    const token = slack.botToken

    t.match([(await del(member)).statusCode], [403], 'a member may not')
    t.equal(checked('DELETE', URL, await h.inject({ method: 'DELETE', url: URL })).statusCode, 401)

    slack.failRevoke = true
    const down = await del(admin)
    slack.failRevoke = false
    t.match([down.statusCode, down.json().code], [502, 'UPSTREAM_FAILED'], 'Slack did not answer: 502')
    t.match(await settings(), { installed: true }, 'and the installation is kept')

    const done = await del(admin)
    t.equal(done.statusCode, 204)
    const revokes = slack.args('auth.revoke')
    t.equal(revokes.at(-1)?.authorization, `Bearer ${token}`, 'the bot token was revoked at Slack')
    t.match(await settings(), { installed: false, teamName: null })
    const rows = await h.db.query('SELECT count(*)::int AS n FROM chat_installations WHERE workspace_id = $1', [admin.workspaceId])
    t.equal((rows.rows[0] as { n: number }).n, 0, 'the installation and its encrypted token are gone')
    const events = await h.inject({ url: '/api/events?types=chat.uninstalled', headers: { cookie: admin.cookie } })
    t.match(events.json().items.at(-1), { type: 'chat.uninstalled', source: 'web', actor: { type: 'user', id: admin.userId }, data: { platform: 'slack', teamId: 'T0TEAM01', reason: 'uninstalled_by_admin' } })
    const again = await del(admin)
    t.match([again.statusCode, again.json().code], [404, 'NOT_FOUND'], 'again: nothing installed')

    // Installed again, the token then revoked in Slack (the app removed there, the event missed):
    // the uninstall still goes through.
    t.equal((await install(h, admin)).statusCode, 302)
    t.not(slack.botToken, token, 'a new token')
    await fetch(`${slack.fake.url}/auth.revoke`, { method: 'POST', headers: { authorization: `Bearer ${slack.botToken}` } })
    t.equal((await del(admin)).statusCode, 204, 'a token Slack no longer knows is as good as revoked')
    t.match(await settings(), { installed: false })
  })
})
