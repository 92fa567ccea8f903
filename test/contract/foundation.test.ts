import t from 'tap'
import { connect } from 'node:net'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { invite } from '../helpers/invite.js'

// Bad input of every class, against POST /api/users/invite with a valid admin session, so the
// answer comes from validation and parsing, not from authentication.

t.test('bad input classes answer ErrorResponse with the contract status', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })

  await t.test('415 for a body that is not application/json (text/plain would skip the schema)', async t => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'text/html', 'application/xml']) {
      const res = await invite(h, admin.cookie, 'email=a@example.com', { 'content-type': type })
      t.equal(res.statusCode, 415, type)
      t.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE')
      assertContract(t, 'POST', '/api/users/invite', res)
    }
  })

  await t.test('400 for an unknown field, naming it (not silently removed)', async t => {
    const res = await invite(h, admin.cookie, JSON.stringify({ email: 'a@example.com', role: 'member', isAdmin: true }))
    t.equal(res.statusCode, 400)
    const body = res.json()
    t.equal(body.code, 'VALIDATION_FAILED')
    t.same(body.details.errors, [{ in: 'body', field: 'isAdmin', message: 'is not an allowed field' }])
    assertContract(t, 'POST', '/api/users/invite', res)
  })

  await t.test('400 listing every failing field; no coercion of JSON types', async t => {
    const res = await invite(h, admin.cookie, JSON.stringify({ email: 42, role: 'owner' }))
    t.equal(res.statusCode, 400)
    const fields = res.json().details.errors.map((e: { field: string }) => e.field).sort()
    t.same(fields, ['email', 'role'])
    const bad = await invite(h, admin.cookie, JSON.stringify({ email: 'not-an-email', role: 'member' }))
    t.equal(bad.statusCode, 400)
    t.match(bad.json().details.errors[0], { field: 'email', message: /format "email"/ })
    const missing = await invite(h, admin.cookie, JSON.stringify({ role: 'admin' }))
    t.match(missing.json().details.errors[0], { field: 'email', message: /required/ })
    const long = await invite(h, admin.cookie, JSON.stringify({ email: `${'a'.repeat(250)}@example.com`, role: 'member' }))
    t.equal(long.statusCode, 400, 'longer than 254 characters')
    // As any validator reads the schema: role is required (its default only documents what to send),
    // and an address with surrounding spaces is not `format: email`.
    const noRole = await invite(h, admin.cookie, JSON.stringify({ email: 'no-role@example.com' }))
    t.equal(noRole.statusCode, 400, 'no role')
    t.same(noRole.json().details.errors, [{ in: 'body', field: 'role', message: "must have required property 'role'" }])
    const padded = await invite(h, admin.cookie, JSON.stringify({ email: '  padded@example.com ', role: 'member' }))
    t.equal(padded.statusCode, 400, 'surrounding spaces')
    t.match(padded.json().details.errors, [{ in: 'body', field: 'email', message: /format "email"/ }])
  })

  await t.test('400 for malformed JSON and for an empty JSON body', async t => {
    for (const payload of ['{"email": "a@example.com"', 'nope', '']) {
      const res = await invite(h, admin.cookie, payload)
      t.equal(res.statusCode, 400, JSON.stringify(payload))
      t.equal(res.json().code, 'INVALID_JSON')
      assertContract(t, 'POST', '/api/users/invite', res)
    }
  })

  await t.test('400 for __proto__ and constructor.prototype keys', async t => {
    for (const payload of [
      '{"email":"a@example.com","__proto__":{"role":"admin"}}',
      '{"email":"a@example.com","constructor":{"prototype":{"isAdmin":true}}}'
    ]) {
      const res = await invite(h, admin.cookie, payload)
      t.equal(res.statusCode, 400, payload)
      t.equal(res.json().code, 'VALIDATION_FAILED')
      t.match(res.json().message, /forbidden key/)
      assertContract(t, 'POST', '/api/users/invite', res)
    }
  })

  await t.test('413 for a body over the limit', async t => {
    const res = await invite(h, admin.cookie, JSON.stringify({ email: 'a@example.com', pad: 'x'.repeat(h.config.bodyLimit) }))
    t.equal(res.statusCode, 413)
    t.equal(res.json().code, 'PAYLOAD_TOO_LARGE')
    assertContract(t, 'POST', '/api/users/invite', res)
  })
})

t.test('unknown routes and wrong methods', async t => {
  const h = await build(t)
  const nf = await h.inject({ method: 'GET', url: '/api/no-such-thing' })
  t.equal(nf.statusCode, 404)
  t.same(nf.json(), { message: 'GET /api/no-such-thing not found', code: 'NOT_FOUND' })
  t.match(nf.headers['content-type'], /^application\/json/)

  // Only what the contract declares is answered: another method on a known path is 404 too
  // (test/contract/contract-constraints.test.ts walks every path and method).
  const wrong = await h.inject({ method: 'PUT', url: '/api/users/invite' })
  t.equal(wrong.statusCode, 404)
  t.same(wrong.json(), { message: 'PUT /api/users/invite not found', code: 'NOT_FOUND' })
  t.equal(wrong.headers.allow, undefined)
  const head = await h.inject({ method: 'HEAD', url: '/api/openapi.json' })
  t.equal(head.statusCode, 404, 'no implicit HEAD for a GET operation (HEAD /api/health is declared)')
})

t.test('a method Node\'s parser refuses (FOO) is an ErrorResponse too', async t => {
  const h = await build(t)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(
      port, '127.0.0.1', () => { socket.write('FOO /api/health HTTP/1.1\r\nHost: localhost\r\n\r\n') }
    )
    let data = ''
    socket.on('data', chunk => { data += chunk.toString('utf8') })
    socket.on('end', () => { resolve(data) })
    socket.on('error', reject)
  })
  const [head, body] = raw.split('\r\n\r\n') as [string, string]
  t.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(head, /\r\nContent-Type: application\/json; charset=utf-8\r\n/i)
  t.match(head, new RegExp(`\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`, 'i'))
  t.same(JSON.parse(body), { message: 'The request is not valid: it is not valid HTTP/1.1', code: 'VALIDATION_FAILED' })
})

t.test('401 before the body is read: no session beats bad input', async t => {
  const h = await build(t)
  const res = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { 'content-type': 'text/plain' },
    payload: 'x'
  })
  t.equal(res.statusCode, 401)
  t.same(res.json(), { message: 'Authentication required', code: 'UNAUTHENTICATED' })
  assertContract(t, 'POST', '/api/users/invite', res)
})

t.test('order of checks: token, then the request, then the session row and the role', async t => {
  const h = await build(t, { env: { INVITE_EMAILS_PER_HOUR: '2' } })
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const revoked = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  await h.app.services.sessions.revoke(h.db, revoked.sessionId)
  const forged = admin.cookie.slice(0, -4) + (admin.cookie.endsWith('AAAA') ? 'BBBB' : 'AAAA')
  const bad = { email: 'not-an-e-mail', extra: 1 }
  const good = () => ({ email: `order-${Math.random().toString(36).slice(2)}@example.com`, role: 'member' })
  const checked = async (cookie: string | null, payload: unknown) => {
    const res = await invite(h, cookie, payload)
    assertContract(t, 'POST', '/api/users/invite', res)
    return res
  }

  t.equal((await checked(null, bad)).statusCode, 401, 'no cookie: 401 before the body is looked at')
  t.equal((await checked(forged, bad)).statusCode, 401, 'a token we did not sign: 401 before the body is looked at')
  // A token we signed but whose session is revoked, or a member on an admin operation: the
  // request is validated first (no database round trip for a malformed one), then refused.
  t.equal((await checked(revoked.cookie, bad)).statusCode, 400)
  t.equal((await checked(revoked.cookie, good())).statusCode, 401, 'revoked session, valid request: 401')
  t.equal((await checked(member.cookie, bad)).statusCode, 400)
  t.equal((await checked(member.cookie, good())).statusCode, 403, 'member, valid request: 403')

  const list = async (
    cookie: string | null
  ) => (await h.inject({
    method: 'GET',
    url: '/api/users?limit=0',
    headers: cookie === null ? {} : { cookie }
  })).statusCode
  t.equal(await list(null), 401, 'GET without a cookie')
  t.equal(await list(revoked.cookie), 400, 'GET with a revoked session and a bad query')
  t.equal(await list(member.cookie), 400, 'GET as a member with a bad query')

  // The invitation-e-mail budget (2 per hour here) is drawn only by requests that can send one.
  for (let i = 0; i < 5; i++) t.equal((await checked(admin.cookie, bad)).statusCode, 400)
  t.equal((await checked(admin.cookie, good())).statusCode, 200)
  t.equal((await checked(admin.cookie, good())).statusCode, 200)
  const limited = await checked(admin.cookie, good())
  t.equal(limited.statusCode, 429, 'the third invitation in the hour is refused, the 400s did not count')
  t.equal(limited.json().code, 'RATE_LIMITED')
})

t.test('health answers the contract shape with the package version', async t => {
  const h = await build(t)
  const res = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(res.statusCode, 200)
  t.match(res.json(), { status: 'ok', version: h.config.version, checks: { database: { status: 'ok' } } })
  t.notOk('mail' in res.json().checks, 'no relay check without a relay (the dev mailbox cannot be down)')
  assertContract(t, 'GET', '/api/health', res)
})

t.test('HEAD /api/health: the same checks, a status without a body (uptime checkers)', async t => {
  const h = await build(t, { env: { HEALTH_CACHE_MS: '0' } }) // every check pings
  const up = await h.inject({ method: 'HEAD', url: '/api/health' })
  t.equal(up.statusCode, 200)
  t.equal(up.body, '', 'no body')
  assertContract(t, 'HEAD', '/api/health', up)
  await h.db.close() // the database gone
  const down = await h.inject({ method: 'HEAD', url: '/api/health' })
  t.equal(down.statusCode, 503)
  t.equal(down.body, '')
  assertContract(t, 'HEAD', '/api/health', down)
  t.equal((await h.inject({ method: 'HEAD', url: '/api/users/me' })).statusCode, 404, 'HEAD only where declared')
})
