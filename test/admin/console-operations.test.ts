import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey, mcpRequest } from '../helpers/mcp.js'

// The operations the admin console needed, added to the contract for every client: member search
// and role filter on GET /api/users (REST and the MCP tool), the workspace's name and the Slack and
// identity-provider state in its settings, and the door (`source`) of each audit event — `web` for
// the session cookie. (The webhook test event is in test/webhooks/webhooks.test.ts.)

const h = await build(t)
const admin = await h.signIn({ role: 'admin', email: 'ada@example.com', workspaceName: 'Acme Robotics' })
const json = { cookie: admin.cookie, 'content-type': 'application/json' }
const people: Array<[string, string | null, 'admin' | 'member']> = [
  ['grace@example.com', 'Grace Hopper', 'member'],
  ['alan@example.com', 'Alan Turing', 'admin'],
  ['adele@example.com', null, 'member'],
  ['hopper@example.com', 'Ada%_ Test', 'member']
]
for (const [email, name, role] of people) {
  const u = await h.signIn({ role, email, workspaceId: admin.workspaceId })
  await h.db.query('UPDATE users SET name = $1 WHERE id = $2', [name, u.userId])
}
await h.db.query("UPDATE users SET name = 'Ada Lovelace' WHERE id = $1", [admin.userId])
const other = await h.signIn({ role: 'admin', email: 'adam@example.com' })
t.ok(other.workspaceId !== admin.workspaceId, 'another workspace, whose members never show')

interface Listed { status: number, emails: string[], next: string | null, body: unknown }

async function users (query: string): Promise<Listed> {
  const url = `/api/users?${query}`
  const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', url, res)
  const body = res.json()
  return {
    status: res.statusCode,
    emails: res.statusCode === 200 ? (body.items as Array<{ email: string }>).map(u => u.email) : [],
    next: body.nextCursor ?? null,
    body
  }
}

t.test('members: search by the start of an e-mail or a name, filter by role, paged', async t => {
  // The test clock stands still: members made at one instant are in id order, so compare sets.
  const found = async (query: string) => (await users(query)).emails.sort()
  t.same(await found('q=ad'), ['ada@example.com', 'adele@example.com', 'hopper@example.com'],
    'e-mail or name begins with it')
  t.same(await found('q=GRACE'), ['grace@example.com'], 'case does not matter')
  t.same(await found('q=hopper'), ['hopper@example.com'],
    'a name matches at its start only ("Grace Hopper" is not found by "hopper"; hopper@ is)')
  t.same(await found(`q=${encodeURIComponent('ada%_')}`), ['hopper@example.com'], '% and _ are taken literally')
  t.same(await found('q=%25'), [], 'a lone % matches nothing')
  t.same(await found('role=admin'), ['ada@example.com', 'alan@example.com'])
  t.same(await found('role=member&q=a'), ['adele@example.com', 'hopper@example.com'], 'both filters together')
  t.same(await found('q=nobody'), [])
  const first = await users('q=a&limit=2')
  t.equal(first.emails.length, 2)
  const second = await users(`q=a&limit=2&cursor=${first.next ?? ''}`)
  t.same([...first.emails, ...second.emails].sort(), await found('q=a'), 'the next page keeps the filter')
  t.equal(second.next, null)
  const bad = await users('role=owner')
  t.equal(bad.status, 400)
  t.match(bad.body, { code: 'VALIDATION_FAILED' })
  t.equal((await users('q=')).status, 400, 'an empty search is refused (leave it out instead)')

  const key = await createApiKey(h, admin, 'assistant')
  const res = await mcpRequest(h, key.secret, 'tools/call', { name: 'list_members', arguments: { q: 'ad', role: 'member' } })
  const tool = res.json().result as { structuredContent: { items: Array<{ email: string }> } }
  t.same(tool.structuredContent.items.map(u => u.email).sort(), ['adele@example.com', 'hopper@example.com'],
    'the MCP tool list_members takes the same filters')
})

t.test('members and invitations: who invited, through which door', async t => {
  const invited = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: json, payload: { email: 'zoe@example.com', role: 'member' }
  })
  const token = new URL(invited.json().invitationUrl as string).searchParams.get('token')
  const joined = await h.inject({ method: 'POST', url: '/api/auth/signup', payload: { token, name: 'Zoe' } })
  t.equal(joined.statusCode, 201, 'the invitee signed up')
  const zoe = (await users('q=zoe')).body as { items: Array<Record<string, unknown>> }
  t.same(zoe.items[0]?.invitedBy, { type: 'user', name: 'Ada Lovelace', email: 'ada@example.com', source: 'web' },
    'invited by Ada (her name, her e-mail), through the web door')
  const url = '/api/invitations?status=accepted'
  const accepted = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', url, accepted)
  t.match(accepted.json().items, [{
    email: 'zoe@example.com', inviter: { type: 'user', name: 'Ada Lovelace', email: 'ada@example.com', source: 'web' }, deliveryError: null
  }], 'the invitations list names the inviter and door too, and the last delivery failure (none here)')
  const ada = (await users('q=ada%40')).body as { items: Array<Record<string, unknown>> }
  t.equal(ada.items[0]?.invitedBy, null, 'the first admin was invited by no one')

  // An inviter that is not a person has a name (the key's) and no e-mail (2.0: 1.x put the key's name in `email`).
  const key = await createApiKey(h, admin, 'HR import', ['invitations:write'])
  const byKey = await h.inject({
    method: 'POST', url: '/api/users/invite', headers: { authorization: `Bearer ${key.secret}` }, payload: { email: 'kim@example.com', role: 'member' }
  })
  t.equal(byKey.statusCode, 200, byKey.body)
  const pending = await h.inject({ method: 'GET', url: '/api/invitations?status=pending', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/invitations?status=pending', pending)
  const kim = (pending.json().items as Array<{ email: string, inviter: unknown }>).find(i => i.email === 'kim@example.com')
  t.same(kim?.inviter, { type: 'api_key', name: 'HR import', email: null, source: 'api' }, 'an API key: its name, no e-mail')
})

t.test('settings: the name renamed, the Slack and identity-provider state read', async t => {
  const get = await h.inject({ method: 'GET', url: '/api/workspace/settings', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/workspace/settings', get)
  t.same(get.json(), {
    name: 'Acme Robotics',
    invitePolicy: 'admins',
    invitationReminderDays: 2,
    slack: { available: false, installed: false, teamName: null, installedAt: null },
    identityProvider: { available: false, organizationLinked: false },
    directory: { adminGroup: null, welcomeEmail: false },
    auditRetentionDays: null,
    locale: 'en',
    timeZone: 'UTC'
  }, 'no Slack or WorkOS configured on the embedded defaults; no directory group, no welcome e-mail; English, UTC')

  const renamed = await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: json, payload: { name: '  Acme Labs ' } })
  t.equal(renamed.statusCode, 200)
  assertContract(t, 'PATCH', '/api/workspace/settings', renamed)
  t.match(renamed.json(), { name: 'Acme Labs', invitePolicy: 'admins' }, 'surrounding spaces dropped')
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
  t.equal(me.json().workspace.name, 'Acme Labs', 'the new name everywhere')

  const blank = await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: json, payload: { name: '   ' } })
  t.equal(blank.statusCode, 400)
  assertContract(t, 'PATCH', '/api/workspace/settings', blank)
  t.match(blank.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ in: 'body', field: 'name' }] } })
  const long = await h.inject({ method: 'PATCH', url: '/api/workspace/settings', headers: json, payload: { name: 'x'.repeat(201) } })
  t.equal(long.statusCode, 400)

  const both = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: json, payload: { name: 'Acme Robotics', invitePolicy: 'members' }
  })
  t.match(both.json(), { name: 'Acme Robotics', invitePolicy: 'members' })
  const trail = await h.inject({
    method: 'GET', url: '/api/audit-events?action=workspace.settings_changed', headers: { cookie: admin.cookie }
  })
  t.match(trail.json().items, [
    { source: 'web', payload: { name: { from: 'Acme Labs', to: 'Acme Robotics' }, invitePolicy: { from: 'admins', to: 'members' } } },
    { source: 'web', payload: { name: { from: 'Acme Robotics', to: 'Acme Labs' } } }
  ], 'audited with what each replaced, through the web door')
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const refused = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: member.cookie, 'content-type': 'application/json' }, payload: { name: 'Mine' }
  })
  t.equal(refused.statusCode, 403)
})

t.test('the audit trail names the door: web for the session cookie, mcp for an API key', async t => {
  const key = await createApiKey(h, admin, 'door test')
  const viaMcp = await mcpRequest(h, key.secret, 'tools/call', { name: 'invite_user', arguments: { email: 'mcp-door@example.com' } })
  t.equal(viaMcp.statusCode, 200)
  const viaWeb = await h.inject({ method: 'POST', url: '/api/users/invite', headers: json, payload: { email: 'web-door@example.com', role: 'member' } })
  t.ok([200, 201].includes(viaWeb.statusCode), `invited: ${viaWeb.statusCode}`)
  const res = await h.inject({ method: 'GET', url: '/api/audit-events?action=invitation.created', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/audit-events?action=invitation.created', res)
  const items = res.json().items as Array<{ source: string, actor: { type: string }, payload: { email: string } }>
  t.same(items.slice(0, 2).map(e => [e.payload.email, e.actor.type, e.source]), [
    ['web-door@example.com', 'user', 'web'],
    ['mcp-door@example.com', 'api_key', 'mcp']
  ])

  // The trail's filters: by the person (their e-mail, any case), by the door, by a time range.
  type Item = { source: string, actor: { label: string }, createdAt: string }
  const trail = async (query: string): Promise<Item[]> => {
    const url = `/api/audit-events?${query}`
    const res = await h.inject({ method: 'GET', url, headers: { cookie: admin.cookie } })
    assertContract(t, 'GET', url, res)
    return res.json().items
  }
  const byAda = await trail('actor=ADA@example.com')
  t.ok(byAda.length > 0 && byAda.every(e => e.actor.label === 'ada@example.com'), 'what ada@ did, whichever door')
  t.same([...new Set(byAda.map(e => e.source))].sort(), ['web'], 'through the web door: a key is its own actor')
  const byKey = await trail('actor=Door%20Test')
  t.ok(byKey.length > 0 && byKey.every(e => e.source === 'mcp' && e.actor.label === 'door test'), 'what the key did, by its name')
  t.ok((await trail('source=mcp')).every(e => e.source === 'mcp'), 'one door')
  const now = h.clock.now().getTime()
  t.equal((await trail(`since=${new Date(now + 1000).toISOString()}`)).length, 0, 'nothing after now')
  const around = `since=${new Date(now - 1000).toISOString()}&until=${new Date(now + 1000).toISOString()}`
  t.ok((await trail(around)).length > 0, 'the last seconds')
  t.equal((await trail(`until=${new Date(now - 60_000).toISOString()}`)).length, 0, 'nothing before the test began')
})
