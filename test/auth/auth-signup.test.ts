import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { upsertPendingInvitation } from '../../src/db/invitations.js'
import { insertUser, type Role } from '../../src/db/users.js'
import { hashToken, randomToken } from '../../src/lib/tokens.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'

// Accepting an invitation made by the fallback path: preview, signup, every token state, and
// single use under concurrent accepts. Fixtures write the invitation row directly.

const DAY = 24 * 3600_000

/** A pending invitation written to the database (a fixture: not through the REST door), and its token. */
async function pendingInvitation (h: TestApp, o: { email?: string, role?: Role, ttlMs?: number } = {}) {
  const inviter = await h.signIn({ role: 'admin', workspaceName: 'Acme & <Co>' })
  const token = randomToken()
  const inv = await upsertPendingInvitation(h.db, {
    workspaceId: inviter.workspaceId,
    email: o.email ?? `invitee-${randomToken(16).slice(0, 8).toLowerCase().replace(/[^a-z0-9]/g, 'x')}@example.com`,
    role: o.role ?? 'member',
    tokenHash: hashToken(token),
    expiresAt: new Date(h.clock.now().getTime() + (o.ttlMs ?? 7 * DAY)),
    invitedBy: inviter.userId,
    now: h.clock.now()
  })
  return { token, inv, inviter }
}

const post = async (h: TestApp, url: string, body: unknown) =>
  await h.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body)
  })

t.test('accepting invitations', async t => {
  // One app for every step (building one costs seconds); each step makes its own users.
  const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })

  await t.test('preview, then signup: the user is created with the invited role and signed in', async t => {
    const { token, inv, inviter } = await pendingInvitation(h, { role: 'admin' })
    await h.db.query('UPDATE users SET name = $2 WHERE id = $1', [inviter.userId, 'Ada Admin'])

    const preview = await post(h, '/api/auth/invitation', { token })
    assertContract(t, 'POST', '/api/auth/invitation', preview)
    t.equal(preview.statusCode, 200)
    t.same(preview.json(), {
      workspace: { id: inviter.workspaceId, name: 'Acme & <Co>' },
      email: inv.email,
      role: 'admin',
      expiresAt: inv.expiresAt.toISOString(),
      invitedBy: 'Ada Admin'
    })
    const again = await post(h, '/api/auth/invitation', { token })
    t.equal(again.statusCode, 200, 'previewing does not consume the token (mail scanners open links)')

    const res = await post(h, '/api/auth/signup', { token, name: '  Grace Hopper ' })
    assertContract(t, 'POST', '/api/auth/signup', res)
    t.equal(res.statusCode, 201)
    const me = res.json()
    t.match(
      me,
      {
        user: { email: inv.email, name: 'Grace Hopper', role: 'admin' },
        workspace: { id: inviter.workspaceId, name: 'Acme & <Co>' }
      }
    )

    const cookie = res.cookies.find(c => c.name === SESSION_COOKIE)
    t.ok(cookie, 'the session cookie is set')
    t.equal(cookie?.httpOnly, true)
    t.equal(cookie?.sameSite, 'Lax')
    t.equal(cookie?.path, '/')
    t.equal(cookie?.secure, undefined, 'not Secure on plain-http local')
    t.equal(cookie?.maxAge, h.config.session.ttlSeconds)
    // The JWT inside lives exactly as long as the cookie and the session row (iat/exp in seconds).
    const claims = JSON.parse(
      Buffer.from(cookie?.value.split('.')[1] ?? '', 'base64url').toString()
    ) as { iat: number, exp: number }
    t.equal(
      claims.exp - claims.iat, h.config.session.ttlSeconds,
      'the token expires after the session lifetime, not 1000 times later'
    )

    const who = await h.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { cookie: `${SESSION_COOKIE}=${cookie?.value}` }
    })
    assertContract(t, 'GET', '/api/users/me', who)
    t.same(who.json(), me, 'the cookie signs the new user in')

    const row = await h.db.query<{ status: string, acceptedUserId: string }>(
      'SELECT status, accepted_user_id AS "acceptedUserId" FROM invitations WHERE id = $1', [inv.id]
    )
    t.same(row.rows[0], { status: 'accepted', acceptedUserId: me.user.id })
    const audit = await h.db.query<{ action: string, actor_id: string, target_type: string }>(
      "SELECT action, actor_id, target_type FROM audit_events WHERE workspace_id = $1 AND action IN ('invitation.accepted', 'session.login') ORDER BY id", [inviter.workspaceId])
    t.same(audit.rows, [
      { action: 'invitation.accepted', actor_id: me.user.id, target_type: 'invitation' },
      { action: 'session.login', actor_id: me.user.id, target_type: 'session' }
    ])
    const payloads = await h.db.query<{ p: string }>('SELECT payload::text AS p FROM audit_events')
    t.notOk(
      payloads.rows.some(r => r.p.includes(token) || r.p.includes(hashToken(token))), 'no token in audit payloads'
    )

    // Single use: the link now answers 410 TOKEN_USED for both preview and signup.
    for (const url of ['/api/auth/signup', '/api/auth/invitation']) {
      const used = await post(h, url, { token })
      assertContract(t, 'POST', url, used)
      t.equal(used.statusCode, 410, `${url} after use`)
      t.equal(used.json().code, 'TOKEN_USED')
    }
  })

  await t.test('token states: unknown, revoked, expired, user exists', async t => {
    const check = async (
      name: string,
      body: unknown,
      status: number,
      code: string,
      urls = ['/api/auth/signup', '/api/auth/invitation']
    ) => {
      for (const url of urls) {
        const res = await post(h, url, body)
        assertContract(t, 'POST', url, res)
        t.equal(res.statusCode, status, `${name}: ${url}`)
        t.equal(res.json().code, code, `${name}: ${url} code`)
        t.equal(res.cookies.length, 0, `${name}: no cookie`)
      }
    }
    await check('unknown token', { token: randomToken() }, 400, 'TOKEN_INVALID')

    const revoked = await pendingInvitation(h)
    await h.db.query(
      "UPDATE invitations SET status = 'revoked', revoked_at = $2, token_hash = NULL WHERE id = $1",
      [revoked.inv.id, h.clock.now()]
    )
    await check('revoked', { token: revoked.token }, 400, 'TOKEN_INVALID')

    const expiring = await pendingInvitation(h, { ttlMs: DAY })
    h.clock.advance(DAY + 1)
    await check('expired', { token: expiring.token }, 410, 'TOKEN_EXPIRED')

    const taken = await pendingInvitation(h, { email: 'taken@example.com' })
    await insertUser(
      h.db,
      {
        workspaceId: taken.inviter.workspaceId,
        email: 'taken@example.com',
        name: null,
        role: 'member',
        now: h.clock.now()
      }
    )
    await check('user exists', { token: taken.token }, 409, 'USER_EXISTS', ['/api/auth/signup'])

    await check('no token', {}, 400, 'VALIDATION_FAILED')
    await check('unknown field', { token: 'x', role: 'admin' }, 400, 'VALIDATION_FAILED', ['/api/auth/signup'])
    const users = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email <> 'taken@example.com' AND role = 'member'"
    )
    t.equal(users.rows[0]?.n, 0, 'no user was created by a refused signup')
  })

  await t.test('concurrent signups with one token: exactly one user, one 201, the rest 4xx without a session', async t => {
    for (const n of [2, 5]) {
      const { token, inv } = await pendingInvitation(h)
      const results = await Promise.all(
        Array.from({ length: n }, async (_v, i) => await post(h, '/api/auth/signup', { token, name: `Racer ${i}` }))
      )
      for (const r of results) assertContract(t, 'POST', '/api/auth/signup', r)
      const statuses = results.map(r => r.statusCode).sort()
      t.equal(statuses.filter(s => s === 201).length, 1, `${n} racers: one 201 (${statuses.join(',')})`)
      t.ok(
        statuses.filter(s => s !== 201).every(s => s === 409 || s === 410),
        `${n} racers: the losers get 409/410, never 5xx`
      )
      t.equal(
        results.filter(r => r.cookies.some(c => c.name === SESSION_COOKIE)).length, 1,
        'only the winner gets a session cookie'
      )
      const users = await h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM users WHERE email = $1', [inv.email]
      )
      t.equal(users.rows[0]?.n, 1, `${n} racers: exactly one user`)
      const sessions = await h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1', [inv.email]
      )
      t.equal(sessions.rows[0]?.n, 1, `${n} racers: exactly one session`)
    }
  })

  await t.test('one e-mail invited to two workspaces, accepted at once: one account, the other 409', async t => {
    const a = await pendingInvitation(h, { email: 'both@example.com' })
    const b = await pendingInvitation(h, { email: 'both@example.com' })
    t.not(a.inviter.workspaceId, b.inviter.workspaceId)
    const [ra, rb] = await Promise.all([
      post(h, '/api/auth/signup', { token: a.token }), post(h, '/api/auth/signup', { token: b.token })
    ])
    for (const r of [ra, rb]) assertContract(t, 'POST', '/api/auth/signup', r)
    // On PostgreSQL both pass the existence check and the unique e-mail index decides (23505).
    t.same([ra.statusCode, rb.statusCode].sort(), [201, 409])
    t.equal([ra, rb].find(r => r.statusCode === 409)?.json().code, 'USER_EXISTS')
    const users = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email = 'both@example.com'"
    )
    t.equal(users.rows[0]?.n, 1)
    const pending = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM invitations WHERE email = 'both@example.com' AND status = 'pending'"
    )
    t.equal(pending.rows[0]?.n, 1, 'the losing invitation stays pending (rolled back)')
  })
})
