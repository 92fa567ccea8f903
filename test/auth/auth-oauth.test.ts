import t from 'tap'
import { build, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startFakeHttp, type FakeHttp } from '../helpers/fake-http.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { insertUser } from '../../src/db/users.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { OAUTH_STATE_TTL_MS } from '../../src/oauth/state.js'
import { suspendMember } from '../../src/members/status.js'
import { systemActor } from '../../src/audit/actor.js'

// WorkOS AuthKit login, driven through the real @workos-inc/node SDK against a loopback fake of
// WorkOS's HTTP API (POST /user_management/authenticate).

const API_KEY = 'sk_test_fake_key'
const CLIENT_ID = 'client_fake_123'

function workosUser (
  o: { id: string, email: string, verified?: boolean, first?: string | null, last?: string | null }
) {
  return {
    object: 'user',
    id: o.id,
    email: o.email,
    email_verified: o.verified ?? true,
    first_name: o.first ?? null,
    last_name: o.last ?? null,
    profile_picture_url: null,
    last_sign_in_at: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    external_id: null,
    metadata: {}
  }
}

/** What the fake answers for each authorization code the test hands to the browser. */
function serveCodes (fake: FakeHttp, codes: Record<string, { status?: number, json?: unknown, hang?: boolean }>) {
  fake.on('POST /user_management/authenticate', req => {
    const body = req.json as { code?: string }
    const reply = codes[body.code ?? '']
    if (reply === undefined) {
      return {
        status: 400,
        json: { error: 'invalid_grant', error_description: 'The code is invalid.' }
      }
    }
    return reply
  })
}

const authenticated = (user: ReturnType<typeof workosUser>, organizationId?: string) => ({
  json: {
    user,
    ...(organizationId !== undefined ? { organization_id: organizationId } : {}),
    access_token: 'at_fake',
    refresh_token: 'rt_fake',
    authentication_method: 'GoogleOAuth'
  }
})

async function startLogin (
  t: Parameters<typeof assertContract>[0],
  h: TestApp
): Promise<{ state: string, cookie: string, location: URL }> {
  const res = await h.inject({ method: 'GET', url: '/api/oauth/login' })
  assertContract(t, 'GET', '/api/oauth/login', res)
  const location = new URL(String(res.headers.location))
  const c = res.cookies.find(x => x.name === 'oauth_state')
  return { state: location.searchParams.get('state') ?? '', cookie: c?.value ?? '', location }
}

async function callback (
  t: Parameters<typeof assertContract>[0],
  h: TestApp,
  query: Record<string, string>,
  stateCookie: string | null
) {
  const url = `/api/oauth/callback?${new URLSearchParams(query).toString()}`
  const res = await h.inject({
    method: 'GET',
    url,
    headers: stateCookie !== null ? { cookie: `oauth_state=${stateCookie}` } : {}
  })
  assertContract(t, 'GET', url, res)
  return res
}

t.test('WorkOS AuthKit login', async t => {
  const fake = await startFakeHttp(t)
  const h = await build(t, {
    env: {
      WORKOS_API_KEY: API_KEY,
      WORKOS_CLIENT_ID: CLIENT_ID,
      WORKOS_API_HOSTNAME: fake.hostname,
      WORKOS_API_PORT: String(fake.port),
      WORKOS_API_HTTPS: 'false',
      WORKOS_TIMEOUT_MS: '2000',
      // Every login and callback here comes from one address; the limit is not what is tested.
      AUTH_RATE_LIMIT_PER_MINUTE: '1000',
      PUBLIC_URL: 'http://service.example.test',
      APP_URL: 'http://app.example.test'
    }
  })
  const ws = await insertWorkspace(h.db, { name: 'Initech', workosOrganizationId: 'org_initech', now: h.clock.now() })
  const other = await insertWorkspace(h.db, { name: 'Fallback Co', now: h.clock.now() })
  await insertUser(
    h.db,
    { workspaceId: other.id, email: 'invited@fallback.example', name: 'Invited', role: 'admin', now: h.clock.now() }
  )
  serveCodes(fake, {
    'code-new': authenticated(
      workosUser({ id: 'user_new', email: 'Milton@Initech.example', first: 'Milton', last: 'Waddams' }), 'org_initech'
    ),
    'code-existing': authenticated(workosUser({ id: 'user_existing', email: 'invited@fallback.example' })),
    'code-stranger': authenticated(
      workosUser({ id: 'user_stranger', email: 'stranger@nowhere.example' }), 'org_unknown'
    ),
    'code-unverified': authenticated(
      workosUser({ id: 'user_unverified', email: 'invited@fallback.example', verified: false })
    ),
    'code-hijack': authenticated(workosUser({ id: 'user_other_identity', email: 'invited@fallback.example' })),
    'code-suspended': authenticated(workosUser({ id: 'user_suspended', email: 'suspended@fallback.example' })),
    'code-5xx': { status: 500, json: { message: 'internal secret detail' } },
    'code-hang': { hang: true }
  })

  await t.test('full round trip: redirect with a bound state, callback, session, redirect to the app', async t => {
    const { state, cookie, location } = await startLogin(t, h)
    t.equal(
      `${location.origin}${location.pathname}`, `${fake.url}/user_management/authorize`,
      'to the (fake) WorkOS authorize endpoint'
    )
    t.equal(location.searchParams.get('provider'), 'authkit')
    t.equal(location.searchParams.get('client_id'), CLIENT_ID)
    t.equal(location.searchParams.get('redirect_uri'), 'http://service.example.test/api/oauth/callback')
    t.equal(location.searchParams.get('response_type'), 'code')
    t.ok(state.length >= 22, 'a state with at least 128 bits')
    t.equal(cookie, state, 'the browser holds the state in a cookie')
    const login = await h.inject({ method: 'GET', url: '/api/oauth/login' })
    const setCookie = login.cookies.find(c => c.name === 'oauth_state')
    t.match(setCookie, { httpOnly: true, sameSite: 'Lax', path: '/api/oauth/callback', maxAge: 600 })
    const stored = await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM oauth_states WHERE state_hash = $1', [state]
    )
    t.equal(stored.rows[0]?.n, 0, 'the database holds a hash, not the state')

    const res = await callback(t, h, { code: 'code-new', state }, cookie)
    t.equal(res.statusCode, 302)
    t.equal(res.headers.location, 'http://app.example.test/')
    const session = res.cookies.find(c => c.name === SESSION_COOKIE)
    t.match(session, { httpOnly: true, sameSite: 'Lax', path: '/' })
    t.equal(res.cookies.find(c => c.name === 'oauth_state')?.value, '', 'the state cookie is cleared')

    const sent = fake.requests.filter(r => r.path === '/user_management/authenticate').at(-1)
    t.match(
      sent?.json, { grant_type: 'authorization_code', client_id: CLIENT_ID, client_secret: API_KEY, code: 'code-new' }
    )

    const me = await h.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { cookie: `${SESSION_COOKIE}=${session?.value}` }
    })
    assertContract(t, 'GET', '/api/users/me', me)
    t.match(
      me.json(),
      {
        user: { email: 'milton@initech.example', name: 'Milton Waddams', role: 'member' },
        workspace: { id: ws.id, name: 'Initech' }
      }
    )
    const row = await h.db.query<{ workosUserId: string }>(
      'SELECT workos_user_id AS "workosUserId" FROM users WHERE email = $1', ['milton@initech.example']
    )
    t.same(row.rows, [{ workosUserId: 'user_new' }])
    const audit = await h.db.query<{ payload: unknown }>(
      "SELECT payload FROM audit_events WHERE action = 'session.login' AND workspace_id = $1", [ws.id]
    )
    t.same(audit.rows, [{ payload: { method: 'identity_provider', userCreated: true } }])

    // Signing in again finds the same account (no second user).
    const again = await startLogin(t, h)
    const second = await callback(t, h, { code: 'code-new', state: again.state }, again.cookie)
    t.equal(second.statusCode, 302)
    const count = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email = 'milton@initech.example'"
    )
    t.equal(count.rows[0]?.n, 1)

    // The same callback replayed (same cookie, same state): the state was used.
    const replay = await callback(t, h, { code: 'code-new', state }, cookie)
    t.equal(replay.statusCode, 400)
    t.equal(replay.json().code, 'OAUTH_STATE_INVALID')
    t.match(replay.json().message, /already used/)
    t.equal(replay.cookies.find(c => c.name === SESSION_COOKIE), undefined)
  })

  await t.test('an existing account (invited by the fallback path) signs in to its own workspace', async t => {
    const { state, cookie } = await startLogin(t, h)
    const res = await callback(t, h, { code: 'code-existing', state }, cookie)
    t.equal(res.statusCode, 302)
    const session = res.cookies.find(c => c.name === SESSION_COOKIE)
    const me = await h.inject({
      method: 'GET',
      url: '/api/users/me',
      headers: { cookie: `${SESSION_COOKIE}=${session?.value}` }
    })
    t.match(me.json(), { user: { email: 'invited@fallback.example', role: 'admin' }, workspace: { id: other.id } })
    const row = await h.db.query<{ id: string | null }>(
      "SELECT workos_user_id AS id FROM users WHERE email = 'invited@fallback.example'"
    )
    t.same(row.rows, [{ id: 'user_existing' }], 'the account is linked to the WorkOS user')
  })

  await t.test('a suspended member: the session the provider gave ends, and the provider signs them in no more', async t => {
    const member = await insertUser(
      h.db, { workspaceId: other.id, email: 'suspended@fallback.example', name: null, role: 'member', now: h.clock.now() }
    )
    const signIn = async () => {
      const { state, cookie } = await startLogin(t, h)
      return await callback(t, h, { code: 'code-suspended', state }, cookie)
    }
    const first = await signIn()
    t.equal(first.statusCode, 302, 'an active member signs in')
    const session = `${SESSION_COOKIE}=${first.cookies.find(c => c.name === SESSION_COOKIE)?.value ?? ''}`
    const me = async () => (await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: session } })).statusCode
    t.equal(await me(), 200)

    await suspendMember(h.app.services.ports, other.id, member.id, systemActor('directory'))
    t.equal(await me(), 401, 'the session from the provider ends at once')
    const refused = await signIn()
    t.equal(refused.statusCode, 403, 'the provider\'s word does not bring them back')
    t.match(refused.json(), { code: 'FORBIDDEN', details: { reason: /disabled/ } })
    t.equal(refused.cookies.find(c => c.name === SESSION_COOKIE), undefined, 'no session cookie')
  })

  await t.test('bad state: missing, not this browser\'s, mismatched, stale, unknown — 400, no code exchange', async t => {
    const exchanges = () => fake.requests.filter(r => r.path === '/user_management/authenticate').length
    const before = exchanges()
    const a = await startLogin(t, h)
    const b = await startLogin(t, h)
    const cases: Array<[string, Record<string, string>, string | null, RegExp]> = [
      ['no state in the query', { code: 'code-new' }, a.cookie, /missing/],
      ['no state cookie (another browser)', { code: 'code-new', state: a.state }, null, /did not start/],
      ['cookie and query differ', { code: 'code-new', state: a.state }, b.cookie, /does not match/],
      [
        'a state this service never issued', { code: 'code-new', state: 'forged-state-value-xxxxxxxxxxxx' },
        'forged-state-value-xxxxxxxxxxxx', /unknown/
      ]
    ]
    for (const [name, query, cookie, message] of cases) {
      const res = await callback(t, h, query, cookie)
      t.equal(res.statusCode, 400, name)
      t.equal(res.json().code, 'OAUTH_STATE_INVALID', name)
      t.match(res.json().message, message, name)
      t.equal(res.cookies.find(c => c.name === SESSION_COOKIE), undefined, `${name}: no session`)
      t.equal(
        res.cookies.find(c => c.name === 'oauth_state')?.value, '', `${name}: the state cookie is cleared on error too`
      )
    }
    h.clock.advance(OAUTH_STATE_TTL_MS + 1)
    const stale = await callback(t, h, { code: 'code-new', state: b.state }, b.cookie)
    t.equal(stale.statusCode, 400, 'stale (older than 10 minutes)')
    t.match(stale.json().message, /expired/)
    t.equal(exchanges(), before, 'no code was sent to WorkOS for any of these')

    const c = await startLogin(t, h)
    const denied = await callback(
      t, h, { error: 'access_denied', error_description: 'The user cancelled <script>', state: c.state }, c.cookie
    )
    t.equal(denied.statusCode, 400, 'the provider reported an error')
    t.notMatch(denied.body, /script/, 'the provider\'s text is not reflected')
  })

  await t.test('the provider refuses, fails or hangs; no workspace; unverified or foreign identity', async t => {
    const run = async (code: string) => {
      const s = await startLogin(t, h)
      return await callback(t, h, { code, state: s.state }, s.cookie)
    }
    const refused = await run('code-unknown')
    t.equal(refused.statusCode, 400, 'invalid_grant from WorkOS')
    t.equal(refused.json().code, 'OAUTH_STATE_INVALID')

    const failed = await run('code-5xx')
    t.equal(failed.statusCode, 502)
    t.equal(failed.json().code, 'UPSTREAM_FAILED')
    t.notMatch(failed.body, /secret detail/, 'upstream detail is not passed on')

    const started = performance.now()
    const hung = await run('code-hang')
    t.equal(hung.statusCode, 502, 'a provider that never answers')
    t.ok(performance.now() - started < 5000, 'bounded by WORKOS_TIMEOUT_MS, not the SDK\'s minute')

    for (const [code, reason] of [
      ['code-stranger', /no workspace/], ['code-unverified', /not verified/], ['code-hijack', /another identity/]
    ] as const) {
      const res = await run(code)
      t.equal(res.statusCode, 403, code)
      t.equal(res.json().code, 'FORBIDDEN')
      t.match(res.json().details?.reason, reason, code)
      t.equal(res.cookies.find(c => c.name === SESSION_COOKIE), undefined)
    }
    const strangers = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM users WHERE email = 'stranger@nowhere.example'"
    )
    t.equal(strangers.rows[0]?.n, 0, 'no user created without a workspace')
  })
})
