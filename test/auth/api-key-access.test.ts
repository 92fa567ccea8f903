import t from 'tap'
import { openDatabase } from '../../src/db/client.js'
import { loadMigrations, migrate } from '../../src/db/migrate.js'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'
import { startSmtp, type SmtpPeer } from '../helpers/smtp.js'
import { contract } from '../helpers/contract-examples.js'
import { invite } from '../helpers/invite.js'
import { createMcpTools } from '../../src/mcp/tools.js'

// What a script sees with an API key on REST: the answers of RFC 6750 (401 with the Bearer
// challenge, 403 insufficient_scope naming what is missing), the key as the actor in the audit
// trail, `members:admin` for whatever makes or unmakes an admin, expiry, the cookie-and-key rule,
// and the same scopes on the MCP door. Which operation needs which scope is
// api-key-scopes.test.ts's, derived from the contract.

const INVITE = '/api/users/invite'
const REALM = 'Bearer realm="workspace-service"'

let h: TestApp
let smtp: SmtpPeer
let admin: SignedIn
t.before(async () => {
  smtp = await startSmtp(t)
  h = await build(t, { env: { SMTP_URL: smtp.url } })
  admin = await h.signIn({ role: 'admin' })
})

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` })

t.test('a key with the invitation scope invites over REST: the e-mail leaves, the key is the actor', async t => {
  const key = await createApiKey(h, admin, 'HR import', ['invitations:write'])
  const email = `script-${Date.now()}@example.com`
  const res = await invite(h, null, { email, role: 'member' }, bearer(key.secret))
  t.equal(res.statusCode, 200, res.body)
  assertContract(t, 'POST', INVITE, res)
  t.ok(smtp.messages.some(m => m.to.includes(email)), 'the invitation e-mail was sent')
  const audit = (await h.inject({ url: '/api/audit-events?action=invitation.created', headers: { cookie: admin.cookie } }))
    .json().items as Array<{ actor: unknown, source: string, payload: { email: string } }>
  const row = audit.find(a => a.payload.email === email)
  t.same(row?.actor, { type: 'api_key', id: key.id, label: 'HR import' }, 'the audit trail names the key, by id and name')
  t.equal(row?.source, 'api', 'through the REST door')
  const events = (await h.inject({ url: '/api/events?types=invitation.created', headers: { cookie: admin.cookie } }))
    .json().items as Array<{ actor: { type: string, id: string }, source: string, data: { email?: string } }>
  const event = events.find(e => e.data.email === email)
  t.match(event, { actor: { type: 'api_key', id: key.id }, source: 'api' }, 'and so does the event')
})

t.test('a read-only key is refused with the RFC 6750 challenge; a key cannot make a key', async t => {
  const key = await createApiKey(h, admin, 'reader', ['invitations:read'])
  const res = await invite(h, null, { email: 'nobody@example.com', role: 'member' }, bearer(key.secret))
  t.equal(res.statusCode, 403)
  t.match(res.json(), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['invitations:write'] } })
  t.equal(res.headers['www-authenticate'], `${REALM}, error="insufficient_scope", scope="invitations:write"`)
  assertContract(t, 'POST', INVITE, res)
  t.equal((await h.inject({ url: '/api/invitations', headers: bearer(key.secret) })).statusCode, 200, 'it reads')

  const all = await createApiKey(h, admin, 'everything')
  const made = await h.inject({
    method: 'POST', url: '/api/api-keys', headers: bearer(all.secret), payload: { name: 'child', scopes: ['audit:read'] }
  })
  t.equal(made.statusCode, 403, 'a key with every scope cannot make a key')
  t.equal(made.json().code, 'API_KEY_NOT_ALLOWED')
  assertContract(t, 'POST', '/api/api-keys', made)
  for (const url of ['/api/api-keys', '/api/users/me']) {
    t.equal((await h.inject({ url, headers: bearer(all.secret) })).json().code, 'API_KEY_NOT_ALLOWED', `nor read ${url}`)
  }
})

t.test('no key or a wrong one: 401 with WWW-Authenticate: Bearer', async t => {
  const none = await h.inject({ url: '/api/invitations' })
  t.equal(none.statusCode, 401)
  t.equal(none.headers['www-authenticate'], REALM, 'without credentials: the challenge alone')
  assertContract(t, 'GET', '/api/invitations', none)
  for (const wrong of ['wsk_000000000000_' + 'A'.repeat(43), 'not-a-key']) {
    const res = await h.inject({ url: '/api/invitations', headers: bearer(wrong) })
    t.equal(res.statusCode, 401, `wrong key ${wrong.slice(0, 8)}…`)
    t.equal(res.headers['www-authenticate'], `${REALM}, error="invalid_token"`)
    assertContract(t, 'GET', '/api/invitations', res)
  }
  const cookieOnly = await h.inject({ url: '/api/api-keys' })
  t.equal(cookieOnly.statusCode, 401)
  t.equal(cookieOnly.headers['www-authenticate'], undefined, 'an operation keys never call offers no Bearer challenge')
})

t.test('a request with a cookie and a key is the key\'s alone', async t => {
  const reader = await createApiKey(h, admin, 'reader 2', ['invitations:read'])
  const both = await invite(h, admin.cookie, { email: 'both@example.com', role: 'member' }, bearer(reader.secret))
  t.equal(both.statusCode, 403, 'an admin\'s cookie beside a read-only key does not widen it')
  t.equal(both.json().code, 'INSUFFICIENT_SCOPE')
  const stale = await h.inject({ url: '/api/invitations', headers: { ...bearer(reader.secret), cookie: 'service_session=junk' } })
  t.equal(stale.statusCode, 200, 'a stale cookie beside a good key does not spoil it')
  const badKey = await h.inject({ url: '/api/invitations', headers: { ...bearer('junk'), cookie: admin.cookie } })
  t.equal(badKey.statusCode, 401, 'a wrong key beside a good cookie is still a wrong key')
})

t.test('making or unmaking an admin needs members:admin besides the operation\'s scope', async t => {
  const inviter = await createApiKey(h, admin, 'inviter', ['invitations:write', 'members:write', 'requests:write'])
  const trusted = await createApiKey(h, admin, 'trusted', ['invitations:write', 'members:write', 'members:admin'])
  const missingAdmin = (res: { statusCode: number, json: () => unknown }, what: string) => {
    t.equal(res.statusCode, 403, what)
    t.match(res.json(), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['members:admin'] } }, `${what}: members:admin`)
  }
  missingAdmin(await invite(h, null, { email: 'boss@example.com', role: 'admin' }, bearer(inviter.secret)), 'inviting an admin')
  const batch = await h.inject({
    method: 'POST',
    url: '/api/invitations/batch',
    headers: bearer(inviter.secret),
    payload: { rows: [{ email: 'a1@example.com' }, { email: 'a2@example.com', role: 'admin' }] }
  })
  missingAdmin(batch, 'a batch with an admin row')
  t.equal((await h.inject({ url: '/api/invitations?limit=100', headers: { cookie: admin.cookie } })).json().items
    .filter((i: { email: string }) => i.email === 'a1@example.com').length, 0, 'the refused batch invited no one')

  const asAdmin = await invite(h, null, { email: 'boss@example.com', role: 'admin' }, bearer(trusted.secret))
  t.equal(asAdmin.statusCode, 200, 'with members:admin the admin is invited')
  const listed = (await h.inject({ url: '/api/invitations?limit=100', headers: { cookie: admin.cookie } })).json().items as
    Array<{ id: string, email: string }>
  const invitationId = listed.find(i => i.email === 'boss@example.com')?.id ?? ''
  missingAdmin(await h.inject({
    method: 'POST', url: `/api/invitations/${invitationId}/resend`, headers: bearer(inviter.secret)
  }), 're-sending an admin\'s invitation')

  const other = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  missingAdmin(await h.inject({ method: 'DELETE', url: `/api/users/${other.userId}`, headers: bearer(inviter.secret) }),
    'removing an admin')
  const promote = await h.inject({
    method: 'PATCH', url: `/api/users/${member.userId}`, headers: bearer(inviter.secret), payload: { role: 'admin' }
  })
  missingAdmin(promote, 'promoting a member')
  const removed = await h.inject({ method: 'DELETE', url: `/api/users/${member.userId}`, headers: bearer(inviter.secret) })
  t.equal(removed.statusCode, 204, 'removing a member needs members:write alone')

  const asker = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { invitePolicy: 'request' } })
  const asked = await h.inject({
    method: 'POST', url: '/api/invite-requests', headers: { cookie: asker.cookie }, payload: { email: 'asked@example.com', role: 'member' }
  })
  t.equal(asked.statusCode, 201, asked.body)
  const approve = await h.inject({
    method: 'POST',
    url: `/api/invite-requests/${asked.json().id as string}/approve`,
    headers: bearer(inviter.secret),
    payload: { role: 'admin' }
  })
  missingAdmin(approve, 'approving as admin')
})

t.test('a key expires; an expiry in the past or over a year ahead is refused', async t => {
  for (const [expiresAt, why] of [
    [new Date(h.clock.now().getTime() - 1000).toISOString(), 'must be in the future'],
    [new Date(h.clock.now().getTime() + 367 * 86_400_000).toISOString(), 'must be at most 366 days ahead']
  ] as const) {
    const res = await h.inject({
      method: 'POST', url: '/api/api-keys', headers: { cookie: admin.cookie }, payload: { name: 'x', scopes: ['audit:read'], expiresAt }
    })
    t.equal(res.statusCode, 400)
    t.same(res.json().details, { errors: [{ in: 'body', field: 'expiresAt', message: why }] }, why)
    assertContract(t, 'POST', '/api/api-keys', res)
  }
  const res = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie },
    payload: { name: 'an hour', scopes: ['audit:read'], expiresAt: new Date(h.clock.now().getTime() + 3_600_000).toISOString() }
  })
  t.equal(res.statusCode, 201)
  const key = res.json() as { secret: string, expiresAt: string }
  t.equal((await h.inject({ url: '/api/audit-events', headers: bearer(key.secret) })).statusCode, 200, 'works before its end')
  h.clock.advance(3_600_000)
  const after = await h.inject({ url: '/api/audit-events', headers: bearer(key.secret) })
  t.equal(after.statusCode, 401, 'refused from its end on')
  t.equal(after.headers['www-authenticate'], `${REALM}, error="invalid_token"`)
})

t.test('MCP tools need their operation\'s scopes: a key lists and calls only those', async t => {
  const key = await createApiKey(h, admin, 'assistant', ['invitations:read'])
  const listed = (await mcpRequest(h, key.secret)).json().result.tools as Array<{ name: string }>
  t.same(listed.map(x => x.name), ['list_invitations'], 'tools/list shows what the key may call')
  const called = (await mcpRequest(h, key.secret, 'tools/call', {
    name: 'invite_user', arguments: { email: 'mcp@example.com' }
  })).json().result as { isError: boolean, content: Array<{ text: string }> }
  t.equal(called.isError, true)
  t.match(JSON.parse(called.content[0]?.text ?? '{}'), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['invitations:write'] } })
})

t.test('keys made before scopes get every MCP tool\'s scopes and workspace:read', async t => {
  const db = await openDatabase({ url: null, dataDir: null })
  t.teardown(async () => { await db.close() })
  const all = loadMigrations()
  await migrate(db, { migrations: all.filter(m => m.version < 31) })
  const ws = (await db.query<{ id: string }>('INSERT INTO workspaces (name, created_at) VALUES ($1, now()) RETURNING id', ['w'])).rows[0]?.id
  await db.query(
    'INSERT INTO api_keys (workspace_id, name, prefix, secret_hash, created_at) VALUES ($1, \'old\', \'wsk_000000000001\', \'h\', now())', [ws])
  await migrate(db, { migrations: all })
  const row = (await db.query<{ scopes: string[], expiresAt: Date | null }>(
    'SELECT scopes, expires_at AS "expiresAt" FROM api_keys')).rows[0]
  t.same([...row?.scopes ?? []].sort(), [
    'domains:read', 'domains:write', 'invitations:read', 'invitations:write', 'links:read', 'links:write',
    'members:admin', 'members:read', 'requests:read', 'requests:write', 'workspace:read'
  ])
  t.equal(row?.expiresAt, null, 'and no expiry')
  // The MCP tools' scopes, read from the contract, are all among them: no tool an old key used is
  // lost. Tools added since (suspending members, migration 046) are new powers an old key does not
  // get by itself: an admin grants their scope.
  const addedSince = new Set(['suspend_member', 'reactivate_member'])
  const tools = createMcpTools(contract, h.app.services)
  t.same(tools.filter(tool => addedSince.has(tool.name)).length, addedSince.size, 'the later tools exist')
  const toolScopes = new Set(tools.filter(tool => !addedSince.has(tool.name)).flatMap(tool => [...tool.scopes]))
  t.same([...toolScopes].filter(s => !(row?.scopes ?? []).includes(s)), [], 'every tool\'s scope')
})
