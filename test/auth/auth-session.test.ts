import t from 'tap'
import { createHmac } from 'node:crypto'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { JWT_AUDIENCE } from '../../src/plugins/auth.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { insertUser } from '../../src/db/users.js'
import { createApiKey, MCP, mcpRequest } from '../helpers/mcp.js'

// Session cookies: hand-made JWTs (node:crypto only) that must all be refused, logout, and a
// role change that takes effect on the very next request.

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

function jwt (
  header: Record<string, unknown>,
  payload: Record<string, unknown>,
  key: string | null,
  hash = 'sha256'
): string {
  const input = `${b64(header)}.${b64(payload)}`
  const sig = key === null ? '' : createHmac(hash, key).update(input).digest('base64url')
  return `${input}.${sig}`
}

t.test('session cookies', async t => {
  // One app for every step (building one costs seconds); each step makes its own users.
  const h = await build(t)

  await t.test('forged, foreign and expired session tokens are refused with 401', async t => {
    const me = await h.signIn({ role: 'admin' })
    const other = await h.signIn({ role: 'admin' })
    const now = Math.floor(Date.now() / 1000)
    const claims = { sid: me.sessionId, iss: h.config.publicUrl, aud: JWT_AUDIENCE, iat: now, exp: now + 3600 }
    const secret = h.config.session.secret
    const get = async (token: string) => {
      const res = await h.inject({
        method: 'GET',
        url: '/api/users/me',
        headers: { cookie: `${SESSION_COOKIE}=${token}` }
      })
      assertContract(t, 'GET', '/api/users/me', res)
      return res
    }

    // The control: a token crafted the same way, correctly, is accepted — so each refusal below
    // is caused by the one thing that differs.
    const good = await get(jwt({ alg: 'HS256', typ: 'JWT' }, claims, secret))
    t.equal(good.statusCode, 200, 'a correctly crafted HS256 token is accepted')
    t.equal(good.json().user.id, me.userId)

    const forged: Record<string, string> = {
      'alg none, no signature': jwt({ alg: 'none', typ: 'JWT' }, claims, null),
      'alg none with a signature': `${jwt(
        { alg: 'none', typ: 'JWT' }, claims, null
      )}${createHmac('sha256', secret).update('x').digest('base64url')}`,
      'HS256 with a wrong key': jwt({ alg: 'HS256', typ: 'JWT' }, claims, 'x'.repeat(40)),
      'HS512 with the right secret': jwt({ alg: 'HS512', typ: 'JWT' }, claims, secret, 'sha512'),
      'HS384 with the right secret': jwt({ alg: 'HS384', typ: 'JWT' }, claims, secret, 'sha384'),
      expired: jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now - 7200, exp: now - 60 }, secret),
      'missing exp': jwt(
        { alg: 'HS256', typ: 'JWT' }, { sid: me.sessionId, iss: h.config.publicUrl, aud: JWT_AUDIENCE, iat: now },
        secret
      ),
      'wrong audience': jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, aud: 'someone-else' }, secret),
      'wrong issuer': jwt({ alg: 'HS256', typ: 'JWT' }, { ...claims, iss: 'https://evil.example' }, secret),
      'missing sid': jwt(
        { alg: 'HS256', typ: 'JWT' }, { iss: h.config.publicUrl, aud: JWT_AUDIENCE, iat: now, exp: now + 3600 }, secret
      ),
      'sid that names no session': jwt(
        { alg: 'HS256', typ: 'JWT' }, { ...claims, sid: '00000000-0000-4000-8000-000000000000' }, secret
      ),
      garbage: 'not-a-jwt',
      empty: ''
    }
    // Tampered payload: another user's session id spliced into a validly signed token.
    const [head, , sig] = me.cookie.slice(SESSION_COOKIE.length + 1).split('.')
    forged['tampered payload (sid of another user, original signature)'] = `${head}.${b64({
      ...claims,
      sid: other.sessionId
    })}.${sig}`

    for (const [name, token] of Object.entries(forged)) {
      const res = await get(token)
      t.equal(res.statusCode, 401, name)
      t.equal(res.json().code, 'UNAUTHENTICATED', `${name}: code`)
    }

    const none = await h.inject({ method: 'GET', url: '/api/users/me' })
    t.equal(none.statusCode, 401, 'no cookie at all')
    assertContract(t, 'GET', '/api/users/me', none)
  })

  await t.test('GET /api/users/me answers the user and workspace, read fresh', async t => {
    const me = await h.signIn({ role: 'member', workspaceName: 'Globex' })
    const res = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: me.cookie } })
    assertContract(t, 'GET', '/api/users/me', res)
    t.equal(res.statusCode, 200)
    t.match(
      res.json(),
      {
        user: { id: me.userId, email: me.email, name: null, role: 'member' },
        workspace: { id: me.workspaceId, name: 'Globex' }
      }
    )

    await h.db.query("UPDATE users SET status = 'suspended', suspended_at = now() WHERE id = $1", [me.userId])
    const disabled = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: me.cookie } })
    t.equal(disabled.statusCode, 401, 'a disabled user is signed out at once')
    assertContract(t, 'GET', '/api/users/me', disabled)
  })

  await t.test('logout revokes the session server-side; the old cookie is then refused', async t => {
    const me = await h.signIn({ role: 'admin' })
    const out = await h.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie: me.cookie } })
    assertContract(t, 'POST', '/api/auth/logout', out)
    t.equal(out.statusCode, 204)
    t.equal(out.body, '')
    const cleared = out.cookies.find(c => c.name === SESSION_COOKIE)
    t.ok(cleared, 'the cookie is cleared')
    t.equal(cleared?.value, '')
    t.ok(cleared?.httpOnly, 'cleared with the same attributes (HttpOnly)')
    t.equal(cleared?.path, '/')

    const reuse = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: me.cookie } })
    t.equal(reuse.statusCode, 401, 'the cookie from before logout no longer works')
    assertContract(t, 'GET', '/api/users/me', reuse)

    const audit = await h.db.query<{ action: string, actor_id: string, target_id: string, payload: unknown }>(
      "SELECT action, actor_id, target_id, payload FROM audit_events WHERE action = 'session.logout'")
    t.same(
      audit.rows, [{ action: 'session.logout', actor_id: me.userId, target_id: me.sessionId, payload: {} }],
      'logout is audited once'
    )

    // Idempotent: again with the dead cookie, and with none: 204, nothing more audited.
    for (const headers of [{ cookie: me.cookie }, {}, { cookie: `${SESSION_COOKIE}=garbage` }]) {
      const again = await h.inject({ method: 'POST', url: '/api/auth/logout', headers })
      t.equal(again.statusCode, 204)
      assertContract(t, 'POST', '/api/auth/logout', again)
    }
    const count = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM audit_events WHERE action = 'session.logout'"
    )
    t.equal(count.rows[0]?.n, 1)
  })

  await t.test('a demoted admin is refused admin operations on the next request', async t => {
    const admin = await h.signIn({ role: 'admin' })
    const before = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: admin.cookie } })
    t.equal(before.statusCode, 200)
    assertContract(t, 'GET', '/api/users', before)

    await h.db.query("UPDATE users SET role = 'member' WHERE id = $1", [admin.userId])
    const after = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: admin.cookie } })
    t.equal(after.statusCode, 403)
    t.equal(after.json().code, 'FORBIDDEN')
    assertContract(t, 'GET', '/api/users', after)
    const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
    t.equal(me.json().user.role, 'member', 'the session itself stays valid, with the new role')
  })

  await t.test('GET /api/users pages through the workspace with an opaque keyset cursor', async t => {
    const admin = await h.signIn({ role: 'admin' })
    const stranger = await h.signIn({ role: 'admin' }) // another workspace: never listed
    const emails = [admin.email]
    for (let i = 0; i < 4; i++) {
      h.clock.advance(1000)
      const u = await insertUser(
        h.db,
        {
          workspaceId: admin.workspaceId,
          email: `member${i}@example.com`,
          name: `Member ${i}`,
          role: 'member',
          now: h.clock.now()
        }
      )
      emails.push(u.email)
    }
    // Two users created in the same millisecond: the id breaks the tie, none is skipped or repeated.
    h.clock.advance(1000)
    await insertUser(
      h.db,
      { workspaceId: admin.workspaceId, email: 'same-ms-a@example.com', name: null, role: 'member', now: h.clock.now() }
    )
    await insertUser(
      h.db,
      { workspaceId: admin.workspaceId, email: 'same-ms-b@example.com', name: null, role: 'member', now: h.clock.now() }
    )

    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const url: string = `/api/users?limit=2${cursor !== null ? `&cursor=${encodeURIComponent(cursor)}` : ''}`
      const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
      assertContract(t, 'GET', url, res)
      t.equal(res.statusCode, 200)
      const body = res.json() as { items: Array<{ email: string }>, nextCursor: string | null }
      t.ok(body.items.length <= 2)
      seen.push(...body.items.map(u => u.email))
      cursor = body.nextCursor
      pages++
    } while (cursor !== null && pages < 10)
    t.equal(pages, 4, '7 members in pages of 2')
    t.same(seen.slice(0, 5), emails, 'oldest first')
    t.same(new Set(seen).size, 7, 'no member twice')
    t.notOk(seen.includes(stranger.email), 'only the caller\'s workspace')

    for (const bad of ['not-a-cursor', Buffer.from('2020-01-01T00:00:00.000Z|nope').toString('base64url')]) {
      const url = `/api/users?cursor=${bad}`
      const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
      t.equal(res.statusCode, 400, `cursor ${bad}`)
      t.equal(res.json().code, 'VALIDATION_FAILED')
      assertContract(t, 'GET', url, res)
    }
    const tooMany = await h.inject({ method: 'GET', url: '/api/users?limit=1000', headers: { cookie: admin.cookie } })
    t.equal(tooMany.statusCode, 400)
    assertContract(t, 'GET', '/api/users?limit=1000', tooMany)

    const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
    const forbidden = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: member.cookie } })
    t.equal(forbidden.statusCode, 403)
    assertContract(t, 'GET', '/api/users', forbidden)
  })
})

// The Cookie header is parsed when a cookie is first read (src/http/cookies.ts requestCookie),
// not before every request: health, the contract and API-key calls read none.
t.test('cookies are parsed when first read, once a request, not before every request', async t => {
  let parsed = 0
  const h = await build(t, {
    beforeReady: app => {
      const parse = app.parseCookie.bind(app)
      app.parseCookie = (header: string) => { parsed++; return parse(header) }
    }
  })
  const me = await h.signIn({ role: 'admin' })
  const cookie = `${me.cookie}; other=1`
  t.equal((await h.inject({ method: 'GET', url: '/api/health', headers: { cookie } })).statusCode, 200)
  t.equal((await h.inject({ method: 'GET', url: '/api/openapi.json', headers: { cookie } })).statusCode, 200)
  t.equal(parsed, 0, 'answers that read no cookie parse none')

  const res = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie } })
  t.equal(res.statusCode, 200, 'the session cookie is read where the operation asks for it')
  t.equal(parsed, 1, 'parsed once, though the precheck and the session check both read it')

  const out = await h.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie } })
  t.equal(out.statusCode, 204)
  // @fastify/cookie parses the header again on a reply's first set or clear (its own container):
  // the read here, then the clear. Only answers that set a cookie pay twice.
  t.equal(parsed, 3, 'logout reads it, then clears it')
  t.match(out.headers['set-cookie'], /service_session=;/, 'and the cleared cookie is sent')
  const again = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie } })
  t.equal(again.statusCode, 401, 'the session is gone')
})

t.test('a database that does not answer is 503 with Retry-After, never 401 (embedded database closed)', async t => {
  const h = await build(t)
  const me = await h.signIn({ role: 'admin' })
  const key = await createApiKey(h, me, 'outage')
  await h.db.close()
  const answers = [
    {
      what: 'session cookie',
      method: 'GET',
      url: '/api/users/me',
      res: await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: me.cookie } })
    },
    { what: 'API key', method: 'POST', url: MCP, res: await mcpRequest(h, key.secret) }
  ]
  for (const { what, method, url, res } of answers) {
    t.equal(res.statusCode, 503, `${what}: 503, not 401`)
    t.equal(res.json().code, 'SERVICE_UNAVAILABLE', `${what}: SERVICE_UNAVAILABLE`)
    t.match(res.headers['retry-after'], /^[1-9][0-9]?$/, `${what}: Retry-After in seconds`)
    assertContract(t, method, url, res)
  }
  // A credential that is really invalid is still 401 without the database (checked before it).
  const forged = await h.inject({
    method: 'GET',
    url: '/api/users/me',
    headers: { cookie: `${SESSION_COOKIE}=garbage` }
  })
  t.equal(forged.statusCode, 401)
  const unknownKey = await mcpRequest(h, 'not-a-key')
  t.equal(unknownKey.statusCode, 401)
})
