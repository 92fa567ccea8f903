import t from 'tap'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { startSmtp } from '../helpers/smtp.js'
import { hashToken } from '../../src/lib/tokens.js'
import { SESSION_COOKIE } from '../../src/sessions/service.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// The whole audit trail, driven through the REST API (and MCP for an API-key actor): each action
// records exactly the events listed for it, in order, with actor and target, and no token,
// secret or cookie value used in the test appears anywhere in the trail or its table.

const APP_URL = 'http://app.example.test'

interface Event {
  id: string,
  action: string,
  actor: {
    type: string,
    id: string | null,
    label: string | null
  },
  target: { type: string, id: string } | null,
  payload: Record<string, unknown>,
  createdAt: string
}
type Expected = [
  action: string, actorType: string, actorId: string | null, targetType: string | null, targetId: string | null
]

function tokenOf (url: string): string {
  const token = new URL(url).searchParams.get('token')
  if (token === null) throw new Error(`no token in ${url}`)
  return token
}

function sessionCookieOf (res: LightMyRequestResponse): string {
  const c = res.cookies.find(c => c.name === SESSION_COOKIE)
  if (c === undefined || c.value === '') throw new Error('no session cookie set')
  return c.value
}

t.test('every admin-relevant action records its events, in order, without secrets', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { SMTP_URL: smtp.url, APP_URL, AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })
  /** A request checked against the contract; JSON bodies get their content type. */
  const call = async (o: InjectOptions & { url: string, method: string }) => {
    const headers = { ...(o.payload !== undefined ? { 'content-type': 'application/json' } : {}), ...(o.headers ?? {}) }
    const res = await h.inject({ ...o, headers })
    assertContract(t, o.method, o.url, res)
    return res
  }
  const admin = await h.signIn({ role: 'admin', workspaceName: 'Audit Co' })
  const adminCookie = { cookie: admin.cookie }
  // Every credential this test handles; none may reach the trail, nor its hash.
  const secrets: string[] = [admin.cookie.slice(SESSION_COOKIE.length + 1)]

  // UUIDv7 ids: their text sorts as their time does.
  let lastId = ''
  /** Runs one action and asserts the events it recorded, exactly. */
  const step = async (name: string, action: () => Promise<void>, expected: (() => Expected[])) => {
    await action()
    const res = await call({ method: 'GET', url: '/api/audit-events?limit=100', headers: adminCookie })
    t.equal(res.statusCode, 200)
    const fresh = (res.json().items as Event[]).filter(e => e.id > lastId).reverse()
    t.same(
      fresh.map(e => [e.action, e.actor.type, e.actor.id, e.target?.type ?? null, e.target?.id ?? null]), expected(),
      `${name}: recorded ${expected().map(e => e[0]).join(', ') || 'nothing'}`
    )
    const newest = fresh.at(-1)
    if (newest !== undefined) lastId = newest.id
    return fresh
  }

  const alice = 'alice@example.com'
  let inv1 = ''
  let inv2 = ''
  let aliceId = ''
  let aliceCookie = ''
  let signupSession = ''
  let keyId = ''
  let keySecret = ''

  await step('invite', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/users/invite',
      headers: adminCookie,
      payload: { email: alice, role: 'member' }
    })
    t.equal(res.statusCode, 200)
    secrets.push(tokenOf(res.json().invitationUrl))
    const list = await call({ method: 'GET', url: '/api/invitations?status=pending', headers: adminCookie })
    inv1 = list.json().items[0].id
  }, () => [['invitation.created', 'user', admin.userId, 'invitation', inv1]])

  let aliceToken = ''
  const [resent] = await step('resend', async () => {
    const res = await call({ method: 'POST', url: `/api/invitations/${inv1}/resend`, headers: adminCookie })
    t.equal(res.statusCode, 200)
    aliceToken = tokenOf(res.json().invitationUrl)
    secrets.push(aliceToken)
  }, () => [['invitation.resent', 'user', admin.userId, 'invitation', inv1]])
  t.same(resent?.payload, { email: alice, role: 'member' })

  await step('invite another, then revoke it (two actions)', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/users/invite',
      headers: adminCookie,
      payload: { email: 'bob@example.com', role: 'member' }
    })
    secrets.push(tokenOf(res.json().invitationUrl))
    const list = await call({ method: 'GET', url: '/api/invitations?status=pending', headers: adminCookie })
    inv2 = (list.json().items as Array<{
      id: string,
      email: string
    }>).find(i => i.email === 'bob@example.com')?.id ?? ''
    const del = await call({ method: 'DELETE', url: `/api/invitations/${inv2}`, headers: adminCookie })
    t.equal(del.statusCode, 200)
  }, () => [
    ['invitation.created', 'user', admin.userId, 'invitation', inv2],
    ['invitation.revoked', 'user', admin.userId, 'invitation', inv2]
  ])

  // Signing up is three facts: the invitation is accepted, a member joins (the event integrators
  // subscribe to) and a session starts (found by action=session.login with every other sign-in).
  const signedUp = await step('signup', async () => {
    const res = await call({ method: 'POST', url: '/api/auth/signup', payload: { token: aliceToken } })
    t.equal(res.statusCode, 201)
    aliceId = res.json().user.id
    aliceCookie = sessionCookieOf(res)
    secrets.push(aliceCookie)
    const row = await h.db.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1', [aliceId])
    signupSession = row.rows[0]?.id ?? ''
  }, () => [
    ['invitation.accepted', 'user', aliceId, 'invitation', inv1],
    ['member.joined', 'user', aliceId, 'user', aliceId],
    ['session.login', 'user', aliceId, 'session', signupSession]
  ])
  t.same(signedUp.map(e => e.payload), [
    { userId: aliceId, role: 'member' },
    { email: 'alice@example.com', role: 'member', invitationId: inv1 },
    { method: 'signup' }
  ])

  await step('logout', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { cookie: `${SESSION_COOKIE}=${aliceCookie}` }
    })
    t.equal(res.statusCode, 204)
  }, () => [['session.logout', 'user', aliceId, 'session', signupSession]])

  let loginToken = ''
  await step('login-link request (records nothing: nothing has happened yet)', async () => {
    const seen = smtp.messages.length
    const res = await call({ method: 'POST', url: '/api/auth/login-link', payload: { email: alice } })
    t.equal(res.statusCode, 202)
    await h.app.services.auth.idle()
    const mail = await smtp.nextMessage(seen)
    const m = /\/login\?token=([A-Za-z0-9_-]+)/.exec(mail.text)
    loginToken = m?.[1] ?? ''
    secrets.push(loginToken)
  }, () => [])

  let verifySession = ''
  await step('login-link verify', async () => {
    const res = await call({ method: 'POST', url: '/api/auth/verify', payload: { token: loginToken } })
    t.equal(res.statusCode, 200)
    aliceCookie = sessionCookieOf(res)
    secrets.push(aliceCookie)
    const row = await h.db.query<{ id: string }>(
      'SELECT id FROM sessions WHERE user_id = $1 AND revoked_at IS NULL', [aliceId]
    )
    verifySession = row.rows[0]?.id ?? ''
  }, () => [['session.login', 'user', aliceId, 'session', verifySession]])

  await step('role change', async () => {
    const res = await call({
      method: 'PATCH',
      url: `/api/users/${aliceId}`,
      headers: adminCookie,
      payload: { role: 'admin' }
    })
    t.equal(res.statusCode, 200)
  }, () => [['member.role_changed', 'user', admin.userId, 'user', aliceId]])

  await step('api key create', async () => {
    const res = await call({
      method: 'POST',
      url: '/api/api-keys',
      headers: { cookie: `${SESSION_COOKIE}=${aliceCookie}` },
      payload: { name: 'assistant', scopes: ALL_SCOPES }
    })
    t.equal(res.statusCode, 201)
    keyId = res.json().id
    keySecret = res.json().secret
    secrets.push(keySecret)
  }, () => [['api_key.created', 'user', aliceId, 'api_key', keyId]])

  let inv3 = ''
  await step('invite through MCP with the API key (actor: the key)', async () => {
    const seen = smtp.messages.length
    const res = await call({
      method: 'POST',
      url: '/api/mcp',
      headers: { authorization: `Bearer ${keySecret}`, accept: 'application/json, text/event-stream' },
      payload: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'invite_user', arguments: { email: 'carol@example.com' } }
      }
    })
    t.equal(res.statusCode, 200)
    t.notOk(res.json().result?.isError, 'the tool succeeded')
    t.notOk('invitationUrl' in (res.json().result?.structuredContent ?? {}), 'the link is not handed to the assistant')
    const url = /https?:\/\/\S+\/signup\?token=[A-Za-z0-9_-]+/.exec((await smtp.nextMessage(seen)).text)?.[0] as string
    secrets.push(tokenOf(url))
    const list = await call({ method: 'GET', url: '/api/invitations?status=pending', headers: adminCookie })
    inv3 = (list.json().items as Array<{
      id: string,
      email: string
    }>).find(i => i.email === 'carol@example.com')?.id ?? ''
  }, () => [['invitation.created', 'api_key', keyId, 'invitation', inv3]])

  await step('api key revoke', async () => {
    const res = await call({ method: 'DELETE', url: `/api/api-keys/${keyId}`, headers: adminCookie })
    t.equal(res.statusCode, 204)
  }, () => [['api_key.revoked', 'user', admin.userId, 'api_key', keyId]])

  await step('remove member', async () => {
    const res = await call({ method: 'DELETE', url: `/api/users/${aliceId}`, headers: adminCookie })
    t.equal(res.statusCode, 204)
  }, () => [['member.removed', 'user', admin.userId, 'user', aliceId]])

  await step('refused actions record nothing', async () => {
    const last = await call({ method: 'DELETE', url: `/api/users/${admin.userId}`, headers: adminCookie })
    t.equal(last.statusCode, 409, 'the last admin stays')
    const gone = await call({ method: 'DELETE', url: `/api/invitations/${inv2}`, headers: adminCookie })
    t.equal(gone.statusCode, 409, 'revoking twice is refused')
    const dead = await call({ method: 'POST', url: '/api/auth/verify', payload: { token: loginToken } })
    t.ok([400, 410].includes(dead.statusCode), 'a used login link of a removed member is refused')
  }, () => [])

  // The whole trail, as an admin reads it and as the table stores it: no credential, no hash.
  const all = await call({ method: 'GET', url: '/api/audit-events?limit=100', headers: adminCookie })
  t.equal(all.json().items.length, 14)
  const table = await h.db.query<{ row: string }>('SELECT row_to_json(a)::text AS row FROM audit_events a')
  const stored = table.rows.map(r => r.row).join('\n')
  t.equal(secrets.length, 9, 'every credential of the walk was collected')
  for (const s of secrets) {
    t.ok(s.length >= 20, 'a real credential')
    t.notOk(all.body.includes(s) || stored.includes(s), 'no credential in the trail')
    t.notOk(all.body.includes(hashToken(s)) || stored.includes(hashToken(s)), 'nor its hash')
  }
})
