import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startBlackhole, startSmtp } from '../helpers/smtp.js'
import { invite } from '../helpers/invite.js'

// GET /api/invitations, resend, revoke, the workspace boundary, and Idempotency-Key on invite.

const DAY = 86_400_000
const SESSION_SECRET = 'y'.repeat(40)

function tokenOf (url: string): string {
  return new URL(url).searchParams.get('token') ?? ''
}

async function get (h: TestApp, cookie: string, url: string) {
  const res = await h.inject({ method: 'GET', url, headers: { cookie } })
  return res
}

t.test('list, resend, revoke and the workspace boundary', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url } })
  const admin = await h.signIn()
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const stranger = await h.signIn({ role: 'admin' })

  // Five invitations, one per (fake) minute so the order is known.
  const urls: string[] = []
  for (let i = 0; i < 5; i++) {
    urls.push((await invite(h, admin.cookie, { email: `l${i}@example.com` })).json().invitationUrl)
    h.clock.advance(60_000)
  }
  await invite(h, stranger.cookie, { email: 'theirs@example.com' })

  await t.test('newest first, keyset pages with an opaque cursor', async t => {
    const p1 = await get(h, admin.cookie, '/api/invitations?limit=2')
    t.equal(p1.statusCode, 200)
    assertContract(t, 'GET', '/api/invitations', p1)
    t.same(p1.json().items.map((i: { email: string }) => i.email), ['l4@example.com', 'l3@example.com'])
    t.match(
      p1.json().items[0],
      {
        status: 'pending',
        deliveryStatus: 'sent',
        role: 'member',
        invitedBy: admin.userId,
        identityProviderInvitationId: null,
        acceptedAt: null,
        revokedAt: null
      }
    )
    t.type(p1.json().nextCursor, 'string')
    const p2 = await get(h, admin.cookie, `/api/invitations?limit=2&cursor=${p1.json().nextCursor as string}`)
    t.same(p2.json().items.map((i: { email: string }) => i.email), ['l2@example.com', 'l1@example.com'])
    const p3 = await get(h, admin.cookie, `/api/invitations?limit=2&cursor=${p2.json().nextCursor as string}`)
    t.same(p3.json().items.map((i: { email: string }) => i.email), ['l0@example.com'])
    t.equal(p3.json().nextCursor, null, 'last page')
    assertContract(t, 'GET', '/api/invitations', p3)
    t.notOk(JSON.stringify([p1.json(), p2.json(), p3.json()]).includes('theirs@'), 'another workspace is never listed')

    const bad = await get(h, admin.cookie, '/api/invitations?cursor=not-a-cursor')
    t.equal(bad.statusCode, 400)
    t.equal(bad.json().code, 'VALIDATION_FAILED')
    assertContract(t, 'GET', '/api/invitations', bad)
    const badStatus = await get(h, admin.cookie, '/api/invitations?status=lost')
    t.equal(badStatus.statusCode, 400)
    assertContract(t, 'GET', '/api/invitations', badStatus)
    const forbidden = await get(h, member.cookie, '/api/invitations')
    t.equal(forbidden.statusCode, 403)
    assertContract(t, 'GET', '/api/invitations', forbidden)
  })

  const list = (await get(
    h, admin.cookie, '/api/invitations?limit=100'
  )).json().items as Array<{ id: string, email: string, expiresAt: string }>
  const byEmail = (e: string) => list.find(i => i.email === e) as { id: string, email: string, expiresAt: string }
  const theirs = (await get(h, stranger.cookie, '/api/invitations')).json().items[0] as { id: string }

  await t.test('resend: fresh link and expiry, e-mail sent again, old link dead', async t => {
    const inv = byEmail('l0@example.com')
    const seen = smtp.messages.length
    h.clock.advance(DAY)
    const url = `/api/invitations/${inv.id}/resend`
    const res = await h.inject({ method: 'POST', url, headers: { cookie: admin.cookie } })
    t.equal(res.statusCode, 200)
    assertContract(t, 'POST', url, res)
    const body = res.json()
    t.equal(body.success, true)
    t.equal(body.outcome, 'resent', 'resent, in a field')
    t.not(body.invitationUrl, urls[0], 'a fresh link')
    const mail = await smtp.nextMessage(seen)
    t.ok(mail.text.includes(body.invitationUrl))
    t.equal(
      (await h.inject({
        method: 'POST',
        url: '/api/auth/invitation',
        payload: { token: tokenOf(urls[0] as string) }
      })).statusCode,
      400, 'old link dead'
    )
    const now = (await get(
      h, admin.cookie, '/api/invitations?limit=100'
    )).json().items.find((i: { id: string }) => i.id === inv.id)
    t.equal(now.expiresAt, new Date(h.clock.now().getTime() + 7 * DAY).toISOString(), 'new expiry')
    const audit = await h.db.query<{ action: string, actor_type: string, actor_id: string }>(
      'SELECT action, actor_type, actor_id FROM audit_events WHERE target_id = $1 ORDER BY id', [inv.id]
    )
    t.same(audit.rows, [
      { action: 'invitation.created', actor_type: 'user', actor_id: admin.userId },
      { action: 'invitation.resent', actor_type: 'user', actor_id: admin.userId }
    ])
  })

  await t.test('revoke: 200 with the revoked invitation; its link dies; then 409', async t => {
    const inv = byEmail('l1@example.com')
    const url = `/api/invitations/${inv.id}`
    const res = await h.inject({ method: 'DELETE', url, headers: { cookie: admin.cookie } })
    t.equal(res.statusCode, 200)
    assertContract(t, 'DELETE', url, res)
    t.match(res.json(), { id: inv.id, status: 'revoked', revokedAt: h.clock.now().toISOString() })
    t.equal(
      (await h.inject({
        method: 'POST',
        url: '/api/auth/invitation',
        payload: { token: tokenOf(urls[1] as string) }
      })).statusCode,
      400, 'link dead'
    )
    const again = await h.inject({ method: 'DELETE', url, headers: { cookie: admin.cookie } })
    t.equal(again.statusCode, 409)
    t.equal(again.json().code, 'INVITATION_NOT_PENDING')
    assertContract(t, 'DELETE', url, again)
    const resend = await h.inject({ method: 'POST', url: `${url}/resend`, headers: { cookie: admin.cookie } })
    t.equal(resend.statusCode, 409, 'a revoked invitation cannot be re-sent')
    t.match(resend.json(), { code: 'INVITATION_NOT_PENDING', message: /revoked/ })
    assertContract(t, 'POST', `${url}/resend`, resend)
    const revoked = await get(h, admin.cookie, '/api/invitations?status=revoked')
    t.same(revoked.json().items.map((i: { id: string }) => i.id), [inv.id], 'status filter')
    const audit = await h.db.query<{ action: string }>(
      "SELECT action FROM audit_events WHERE target_id = $1 AND action = 'invitation.revoked'", [inv.id]
    )
    t.equal(audit.rows.length, 1, 'audited once')
  })

  await t.test('an accepted invitation is not pending: 409', async t => {
    const inv = byEmail('l2@example.com')
    const signup = await h.inject({
      method: 'POST',
      url: '/api/auth/signup',
      payload: { token: tokenOf(urls[2] as string) }
    })
    t.equal(signup.statusCode, 201)
    const res = await h.inject({
      method: 'POST',
      url: `/api/invitations/${inv.id}/resend`,
      headers: { cookie: admin.cookie }
    })
    t.equal(res.statusCode, 409)
    t.match(res.json().message, /accepted/)
    const del = await h.inject({
      method: 'DELETE',
      url: `/api/invitations/${inv.id}`,
      headers: { cookie: admin.cookie }
    })
    t.equal(del.statusCode, 409)
  })

  await t.test("another workspace's invitation: 404, untouched", async t => {
    for (const [method, url] of [
      ['POST', `/api/invitations/${theirs.id}/resend`], ['DELETE', `/api/invitations/${theirs.id}`]
    ] as const) {
      const res = await h.inject({ method, url, headers: { cookie: admin.cookie } })
      t.equal(res.statusCode, 404, `${method} ${url}`)
      t.equal(res.json().code, 'NOT_FOUND')
      assertContract(t, method, url, res)
    }
    const missing = await h.inject({
      method: 'DELETE',
      url: '/api/invitations/00000000-0000-4000-8000-000000000000',
      headers: { cookie: admin.cookie }
    })
    t.equal(missing.statusCode, 404)
    const notUuid = await h.inject({ method: 'DELETE', url: '/api/invitations/abc', headers: { cookie: admin.cookie } })
    t.equal(notUuid.statusCode, 400)
    assertContract(t, 'DELETE', '/api/invitations/abc', notUuid)
    const stillThere = (await get(h, stranger.cookie, '/api/invitations')).json().items[0]
    t.equal(stillThere.status, 'pending')
  })

  await t.test('the service as the Slack bot and MCP tools call it: audit actor by principal kind', async t => {
    const svc = h.app.services.invitations
    const base = {
      workspaceId: admin.workspaceId,
      email: admin.email,
      name: 'Ada',
      role: 'admin' as const,
      sessionId: null,
      requestId: null
    }
    const apiKeyId = '6f1c8a52-7d0e-4d8b-9a57-2b0b0e4a0c11'
    const viaChat = await svc.invite(
      { ...base, kind: 'chat', userId: admin.userId, apiKeyId: null }, { email: 'chat@example.com', role: 'member' }
    )
    h.clock.advance(1000)
    const viaKey = await svc.invite(
      { ...base, kind: 'apiKey', userId: admin.userId, apiKeyId }, { email: 'mcp@example.com', role: 'member' }
    )
    t.match(
      [viaChat, viaKey],
      [{ success: true, invitationUrl: /signup\?token=/ }, { success: true, invitationUrl: /signup\?token=/ }]
    )
    const rows = await h.db.query<{
      email: string,
      invited_by: string | null,
      invited_by_api_key: string | null,
      actor_type: string,
      actor_id: string
    }>(
      `SELECT i.email, i.invited_by, i.invited_by_api_key, a.actor_type, a.actor_id FROM invitations i
         JOIN audit_events a ON a.target_id = i.id::text AND a.action = 'invitation.created'
        WHERE i.email IN ('chat@example.com', 'mcp@example.com') ORDER BY i.email`)
    t.same(rows.rows, [
      {
        email: 'chat@example.com',
        invited_by: admin.userId,
        invited_by_api_key: null,
        actor_type: 'chat_platform',
        actor_id: admin.userId
      },
      {
        email: 'mcp@example.com',
        invited_by: null,
        invited_by_api_key: apiKeyId,
        actor_type: 'api_key',
        actor_id: apiKeyId
      }
    ])
    const page = await svc.list(
      { ...base, kind: 'apiKey', userId: admin.userId, apiKeyId }, { status: 'pending', limit: 1 }
    )
    t.equal(page.items[0]?.email, 'mcp@example.com', 'list: newest first')
    t.type(page.nextCursor, 'string')
    const revoked = await svc.revoke(
      { ...base, kind: 'chat', userId: admin.userId, apiKeyId: null }, page.items[0]?.id ?? ''
    )
    t.equal(revoked.status, 'revoked')
    await t.rejects(
      svc.revoke({ ...base, kind: 'chat', userId: admin.userId, apiKeyId: null }, revoked.id),
      { code: 'INVITATION_NOT_PENDING', statusCode: 409 }
    )
  })

  await t.test('an expired invitation is not pending: 409', async t => {
    h.clock.advance(8 * DAY)
    // Sessions last 7 days too: sign in again.
    const fresh = await h.signIn({ workspaceId: admin.workspaceId })
    const old = byEmail('l3@example.com')
    const exp = await h.inject({
      method: 'POST',
      url: `/api/invitations/${old.id}/resend`,
      headers: { cookie: fresh.cookie }
    })
    t.equal(exp.statusCode, 409)
    t.match(exp.json().message, /expired/)
    const expDel = await h.inject({
      method: 'DELETE',
      url: `/api/invitations/${old.id}`,
      headers: { cookie: fresh.cookie }
    })
    t.equal(expDel.statusCode, 409)
    assertContract(t, 'DELETE', `/api/invitations/${old.id}`, expDel)
    const listed = await get(h, fresh.cookie, '/api/invitations?status=pending')
    t.same(listed.json().items, [], 'nothing pending any more')
  })
})

t.test('Idempotency-Key on POST /api/users/invite', async t => {
  const smtp = await startSmtp(t)
  const hole = await startBlackhole(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, SESSION_SECRET } })
  const admin = await h.signIn()
  const other = await h.signIn({ role: 'admin' })

  await t.test('same key + same body replays the first answer (no second e-mail)', async t => {
    const first = await invite(
      h, admin.cookie, { email: 'idem@example.com', role: 'member' }, { 'idempotency-key': 'k-1' }
    )
    t.equal(first.statusCode, 200)
    const replay = await invite(
      h, admin.cookie, { email: 'IDEM@example.com', role: 'member' }, { 'idempotency-key': 'k-1' }
    )
    t.equal(replay.statusCode, 200)
    assertContract(t, 'POST', '/api/users/invite', replay)
    t.same(replay.json(), first.json(), 'the stored answer, same link')
    t.equal(smtp.messages.length, 1, 'sent once')
    t.equal(
      (await h.inject({
        method: 'POST',
        url: '/api/auth/invitation',
        payload: { token: tokenOf(first.json().invitationUrl) }
      })).statusCode,
      200, 'the replayed link still works'
    )
    const otherWs = await invite(
      h, other.cookie, { email: 'idem@example.com', role: 'member' }, { 'idempotency-key': 'k-1' }
    )
    t.not(otherWs.json().invitationUrl, first.json().invitationUrl, 'keys are per workspace')
  })

  await t.test('same key + different body → 422', async t => {
    const res = await invite(
      h, admin.cookie, { email: 'idem@example.com', role: 'admin' }, { 'idempotency-key': 'k-1' }
    )
    t.equal(res.statusCode, 422)
    t.equal(res.json().code, 'IDEMPOTENCY_KEY_REUSED')
    assertContract(t, 'POST', '/api/users/invite', res)
  })

  await t.test('a client error is replayed too', async t => {
    const user = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
    const a = await invite(h, admin.cookie, { email: user.email }, { 'idempotency-key': 'k-409' })
    t.equal(a.statusCode, 409)
    const b = await invite(h, admin.cookie, { email: user.email }, { 'idempotency-key': 'k-409' })
    t.same([b.statusCode, b.json()], [409, a.json()])
    assertContract(t, 'POST', '/api/users/invite', b)
  })

  await t.test('same key while the first is running → 409; a 5xx is not stored', async t => {
    const slow = await build(
      t, { db: h.db, clock: h.clock, env: { SMTP_URL: hole.url, SMTP_TIMEOUT_MS: '500', SESSION_SECRET } }
    )
    // The first request holds the key from before it sends: once it connects to the (silent)
    // SMTP peer, the key is taken.
    const sending = hole.connected()
    const running = invite(slow, admin.cookie, { email: 'slow@example.com' }, { 'idempotency-key': 'k-slow' })
    await sending
    const held = await h.db.query('SELECT 1 FROM idempotency_keys WHERE key = $1', ['k-slow'])
    t.equal(held.rows.length, 1, 'the first request holds the key while it sends')
    const meanwhile = await invite(h, admin.cookie, { email: 'slow@example.com' }, { 'idempotency-key': 'k-slow' })
    t.equal(meanwhile.statusCode, 409)
    t.equal(meanwhile.json().code, 'IDEMPOTENCY_KEY_IN_USE')
    assertContract(t, 'POST', '/api/users/invite', meanwhile)
    const first = await running
    t.equal(first.statusCode, 500, 'the first run failed to send')
    t.equal(first.json().code, 'EMAIL_SEND_FAILED')
    const retry = await invite(h, admin.cookie, { email: 'slow@example.com' }, { 'idempotency-key': 'k-slow' })
    t.equal(retry.statusCode, 200, 'the retry with the same key runs again and succeeds', { body: retry.json() })
    const replay = await invite(h, admin.cookie, { email: 'slow@example.com' }, { 'idempotency-key': 'k-slow' })
    t.same(replay.json(), retry.json(), 'and that success is what is replayed now')
  })
})
