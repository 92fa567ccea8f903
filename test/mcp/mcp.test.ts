import t from 'tap'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { build, principalOf, type SignedIn } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey, MCP, MCP_ACCEPT as ACCEPT, mcpRequest } from '../helpers/mcp.js'
import { loadContract } from '../../src/app.js'

// The MCP endpoint: JSON-RPC over streamable HTTP (stateless, JSON answers), API key only, tools
// that call the same services as REST and fail with the same error codes.

// One app for the file (each test uses workspaces of its own): building one costs seconds.
const h = await build(t)

const rpc = async (
  key: string,
  method: string,
  params?: unknown,
  headers: Record<string, string> = {}
) => await mcpRequest(h, key, method, params, headers)
const newKey = async (admin: SignedIn) => (await createApiKey(h, admin, 'mcp test')).secret

interface ToolResult {
  isError?: boolean,
  content: Array<{ type: string, text: string }>,
  structuredContent?: Record<string, unknown>
}

async function callTool (key: string, name: string, args: unknown): Promise<ToolResult> {
  const res = await rpc(key, 'tools/call', { name, arguments: args })
  if (res.statusCode !== 200) throw new Error(`tools/call ${name}: ${res.statusCode} ${res.body}`)
  const body = res.json()
  if (body.error !== undefined) throw new Error(`tools/call ${name}: JSON-RPC error ${JSON.stringify(body.error)}`)
  return body.result as ToolResult
}

/** The ErrorResponse a failed tool carries as its text. */
function toolErrorOf (r: ToolResult): { message: string, code: string, details?: Record<string, unknown> } {
  if (r.isError !== true) throw new Error(`expected a tool error, got ${JSON.stringify(r)}`)
  return JSON.parse(r.content[0]?.text ?? '{}')
}

t.test('initialize, tools/list and a notification', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const init = await rpc(
    key, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'tap', version: '1' } }
  )
  t.equal(init.statusCode, 200)
  assertContract(t, 'POST', MCP, init)
  t.match(
    init.json(),
    {
      jsonrpc: '2.0',
      result: {
        protocolVersion: '2025-06-18',
        capabilities: { tools: {} },
        serverInfo: { name: 'workspace-service', version: h.config.version }
      }
    }
  )
  t.notOk(init.headers['mcp-session-id'], 'stateless: no session id')
  t.equal(init.headers['x-ratelimit-limit'], '100', 'rate-limit headers reach MCP answers')

  const list = await rpc(key, 'tools/list')
  t.equal(list.statusCode, 200)
  assertContract(t, 'POST', MCP, list)
  const tools = list.json().result.tools as Array<{
    name: string,
    inputSchema: Record<string, unknown>,
    outputSchema: Record<string, unknown>
  }>
  t.same(tools.map(x => x.name).sort(), [
    'add_domain', 'approve_invite_request', 'create_invite_link', 'deny_invite_request', 'invite_many', 'invite_user',
    'list_domains', 'list_invitations', 'list_invite_links', 'list_invite_requests', 'list_members',
    'reactivate_member', 'revoke_invitation', 'revoke_invite_link', 'suspend_member', 'verify_domain'
  ])
  const approveTool = tools.find(x => x.name === 'approve_invite_request')
  t.match(approveTool?.inputSchema, { required: ['id'], properties: { id: { format: 'uuid' }, role: {} } })
  t.notOk(
    'invitationUrl' in ((approveTool?.outputSchema.properties as Record<string, { properties: object }>)
      .invitation?.properties ?? {}),
    'the signup link is not even declared'
  )

  const note = await h.inject({
    method: 'POST',
    url: MCP,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: ACCEPT },
    payload: { jsonrpc: '2.0', method: 'notifications/initialized' }
  })
  t.equal(note.statusCode, 202, 'a notification is accepted without a body')
  t.equal(note.body, '')
  assertContract(t, 'POST', MCP, note)
})

t.test('tool schemas are the contract\'s schemas', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const tools = (await rpc(key, 'tools/list')).json().result.tools as Array<{
    name: string,
    inputSchema: Record<string, unknown>,
    outputSchema: Record<string, unknown>
  }>
  const byName = Object.fromEntries(tools.map(x => [x.name, x]))
  const schemas = (loadContract() as {
    components: { schemas: Record<string, Record<string, unknown>> }
  }).components.schemas
  // The REST body, except that role is optional for the tool (its default, member, applies);
  // its `locale` is the shared LanguageTag inlined, with the field's own description.
  const request = schemas.InviteUserRequest as { properties: Record<string, Record<string, unknown>> }
  const { $ref: _tag, ...localeOwn } = request.properties.locale ?? {}
  t.same(
    byName.invite_user?.inputSchema,
    {
      ...request,
      properties: { ...request.properties, locale: { ...schemas.LanguageTag, ...localeOwn } },
      required: ['email']
    },
    'invite_user takes InviteUserRequest'
  )
  const {
    invitationUrl: _link,
    ...answered
  } = (schemas.InviteUserResponse as { properties: Record<string, unknown> }).properties
  t.same(
    byName.invite_user?.outputSchema, { ...schemas.InviteUserResponse, properties: answered },
    'and answers InviteUserResponse without the signup link'
  )
  t.match(
    byName.list_invitations?.inputSchema,
    {
      type: 'object',
      additionalProperties: false,
      properties: {
        status: schemas.InvitationStatus,
        limit: { type: 'integer', minimum: 1, maximum: 100, default: 50 }
      }
    }
  )
  t.match(
    byName.revoke_invitation?.inputSchema, { required: ['id'], properties: { id: { type: 'string', format: 'uuid' } } }
  )
  t.match(byName.list_members?.outputSchema, { required: ['items', 'nextCursor'] })
})

t.test('the same inputs are accepted and refused by REST and by MCP', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const inviteSamples: Array<[string, unknown, boolean]> = [
    ['email and role', { email: 'same-1@example.com', role: 'admin' }, true],
    ['surrounding spaces', { email: '  same-3@example.com ', role: 'member' }, false],
    ['no email', { role: 'member' }, false],
    ['not an e-mail', { email: 'nope', role: 'member' }, false],
    ['e-mail not a string', { email: 42, role: 'member' }, false],
    ['unknown role', { email: 'same-4@example.com', role: 'owner' }, false],
    ['unknown field', { email: 'same-5@example.com', role: 'member', isAdmin: true }, false],
    ['longer than 254', { email: `${'a'.repeat(250)}@example.com`, role: 'member' }, false],
    ['not an object', ['same-6@example.com'], false]
  ]
  // Without role: REST refuses (the contract requires it); the tool's own default is member.
  const noRole = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie },
    payload: { email: 'same-2@example.com' }
  })
  t.equal(noRole.statusCode, 400, 'REST invite without role')
  const noRoleMcp = await callTool(key, 'invite_user', { email: 'same-2@example.com' })
  t.notOk(noRoleMcp.isError, 'MCP invite_user without role')
  const row = await h.db.query<{ role: string }>("SELECT role FROM invitations WHERE email = 'same-2@example.com'")
  t.equal(row.rows[0]?.role, 'member', 'the tool invited a member')
  // The tool's schema is the REST body's: a locale it takes is kept, as REST keeps it.
  const inJapanese = await callTool(key, 'invite_user', { email: 'same-3@example.com', locale: 'ja' })
  t.notOk(inJapanese.isError, 'MCP invite_user with a locale')
  const localeRow = await h.db.query<{ locale: string | null }>("SELECT locale FROM invitations WHERE email = 'same-3@example.com'")
  t.equal(localeRow.rows[0]?.locale, 'ja', 'the invitation keeps the language the tool was given')
  for (const [label, args, valid] of inviteSamples) {
    const rest = await h.inject({
      method: 'POST',
      url: '/api/users/invite',
      headers: { cookie: admin.cookie, 'content-type': 'application/json' },
      payload: JSON.stringify(args)
    })
    assertContract(t, 'POST', '/api/users/invite', rest)
    t.equal(rest.statusCode, valid ? 200 : 400, `REST invite: ${label}`)
    // A non-object is refused by the MCP protocol layer itself (arguments is an object there).
    if (Array.isArray(args)) continue
    const mcp = await callTool(key, 'invite_user', args)
    t.equal(mcp.isError === true, !valid, `MCP invite_user: ${label}`)
    if (!valid) {
      const err = toolErrorOf(mcp)
      t.equal(err.code, 'VALIDATION_FAILED', `MCP code for: ${label}`)
      t.same((err.details?.errors as Array<{ field: string }>).map(e => e.field).sort(),
        (rest.json().details.errors as Array<{ field: string }>).map(e => e.field).sort(), `same failing fields: ${label}`)
    }
  }

  const listSamples: Array<[Record<string, unknown>, string, boolean]> = [
    [{}, '', true],
    [{ status: 'pending' }, '?status=pending', true],
    [{ status: 'bogus' }, '?status=bogus', false],
    [{ limit: 5 }, '?limit=5', true],
    [{ limit: 0 }, '?limit=0', false],
    [{ limit: 101 }, '?limit=101', false],
    [{ cursor: '' }, '?cursor=', false],
    [{ page: 2 }, '?page=2', false]
  ]
  for (const [args, query, valid] of listSamples) {
    const rest = await h.inject({ method: 'GET', url: `/api/invitations${query}`, headers: { cookie: admin.cookie } })
    assertContract(t, 'GET', `/api/invitations${query}`, rest)
    const mcp = await callTool(key, 'list_invitations', args)
    t.equal(mcp.isError === true, !valid, `MCP list_invitations ${JSON.stringify(args)}`)
    // REST ignores unknown query parameters (Fastify's default); MCP arguments are a closed object.
    if (!('page' in args)) t.equal(rest.statusCode, valid ? 200 : 400, `REST GET /api/invitations${query}`)
  }
})

t.test('tools call the REST services: invite, list, revoke, members; with REST\'s error codes', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })

  const invited = await callTool(key, 'invite_user', { email: 'Grace@Example.com', role: 'admin' })
  t.notOk(invited.isError)
  t.match(invited.structuredContent, { success: true, message: String })
  t.notOk(
    'invitationUrl' in (invited.structuredContent ?? {}), 'the signup link (a credential) never reaches the assistant'
  )
  t.same(JSON.parse(invited.content[0]?.text ?? ''), invited.structuredContent, 'text content is the same JSON')

  const rest = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  const items = rest.json().items as Array<{ id: string, email: string, role: string, status: string }>
  t.match(items, [{ email: 'grace@example.com', role: 'admin', status: 'pending' }], 'visible in GET /api/invitations')
  const invitationId = items[0]?.id as string

  const audit = await h.inject({
    method: 'GET',
    url: `/api/audit-events?targetType=invitation&targetId=${invitationId}`,
    headers: { cookie: admin.cookie }
  })
  t.match(audit.json().items, [{ action: 'invitation.created', actor: { type: 'api_key' } }], 'audited as the API key')

  const listed = await callTool(key, 'list_invitations', { status: 'pending' })
  t.same(listed.structuredContent, rest.json(), 'list_invitations answers what GET /api/invitations answers')

  const members = await callTool(key, 'list_members', {})
  const restMembers = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: admin.cookie } })
  t.same(members.structuredContent, restMembers.json(), 'list_members answers what GET /api/users answers')
  t.equal((members.structuredContent?.items as unknown[]).length, 2)

  const exists = toolErrorOf(await callTool(key, 'invite_user', { email: member.email }))
  t.equal(exists.code, 'USER_EXISTS', 'inviting an existing user: USER_EXISTS')

  const revoked = await callTool(key, 'revoke_invitation', { id: invitationId })
  t.match(revoked.structuredContent, { id: invitationId, status: 'revoked' })
  t.equal(toolErrorOf(await callTool(key, 'revoke_invitation', { id: invitationId })).code, 'INVITATION_NOT_PENDING')
  t.equal(
    toolErrorOf(await callTool(key, 'revoke_invitation', { id: '6f1c8a52-7d0e-4d8b-9a57-2b0b0e4a0c11' })).code,
    'NOT_FOUND'
  )
  t.equal(toolErrorOf(await callTool(key, 'revoke_invitation', { id: 'nope' })).code, 'VALIDATION_FAILED')

  // Another workspace's key sees none of it.
  const stranger = await newKey(await h.signIn())
  t.same((await callTool(stranger, 'list_invitations', {})).structuredContent, { items: [], nextCursor: null })
  t.equal(toolErrorOf(await callTool(stranger, 'revoke_invitation', { id: invitationId })).code, 'NOT_FOUND')

  const unknown = await rpc(key, 'tools/call', { name: 'drop_tables', arguments: {} })
  t.equal(unknown.statusCode, 200)
  t.match(unknown.json(), { error: { code: -32602 } }, 'an unknown tool is a JSON-RPC error')
})

t.test('invite_user draws on the same hourly e-mail budget as POST /api/users/invite', async t => {
  const small = await build(t, { env: { INVITE_EMAILS_PER_HOUR: '2' } })
  const admin = await small.signIn()
  const key = (await createApiKey(small, admin, 'budget')).secret
  const call = async (email: string) => (await mcpRequest(
    small, key, 'tools/call', { name: 'invite_user', arguments: { email } }
  )).json().result as ToolResult
  const rest = await small.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { email: 'budget-rest@example.com', role: 'member' }
  })
  t.equal(rest.statusCode, 200, 'REST: the first e-mail of the hour')
  t.notOk((await call('budget-mcp@example.com')).isError, 'MCP: the second')
  const over = toolErrorOf(await call('budget-over@example.com'))
  t.equal(over.code, 'RATE_LIMITED', 'MCP: the third is refused with REST\'s code')
  const n = await small.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM invitations WHERE email = 'budget-over@example.com'"
  )
  t.equal(n.rows[0]?.n, 0, 'nothing written when over the budget')
  const restOver = await small.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { email: 'budget-rest2@example.com', role: 'member' }
  })
  t.equal(restOver.statusCode, 429, 'and REST sees the same spent budget')
})

t.test('HTTP-level refusals are ErrorResponses', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const post = async (headers: Record<string, string>, payload: string) =>
    await h.inject({ method: 'POST', url: MCP, headers: { authorization: `Bearer ${key}`, ...headers }, payload })

  const notAcceptable = await post(
    { 'content-type': 'application/json', accept: 'application/json' },
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  )
  t.equal(notAcceptable.statusCode, 406)
  t.equal(notAcceptable.json().code, 'NOT_ACCEPTABLE')
  assertContract(t, 'POST', MCP, notAcceptable)

  const notRpc = await post({ 'content-type': 'application/json', accept: ACCEPT }, JSON.stringify({ hello: 'world' }))
  t.equal(notRpc.statusCode, 400)
  t.match(notRpc.json(), { code: 'VALIDATION_FAILED', details: { jsonrpc: { code: -32700 } } })
  assertContract(t, 'POST', MCP, notRpc)

  const badVersion = await post(
    { 'content-type': 'application/json', accept: ACCEPT, 'mcp-protocol-version': '1999-01-01' },
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' })
  )
  t.equal(badVersion.statusCode, 400)
  assertContract(t, 'POST', MCP, badVersion)

  const text = await post({ 'content-type': 'text/plain', accept: ACCEPT }, 'hi')
  t.equal(text.statusCode, 415)
  assertContract(t, 'POST', MCP, text)

  const broken = await post({ 'content-type': 'application/json', accept: ACCEPT }, '{"jsonrpc":')
  t.equal(broken.statusCode, 400)
  t.equal(broken.json().code, 'INVALID_JSON')
  assertContract(t, 'POST', MCP, broken)

  const get = await h.inject({
    method: 'GET',
    url: MCP,
    headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }
  })
  t.equal(get.statusCode, 405, 'no GET stream: stateless, JSON answers only')
  t.equal(get.headers.allow, 'POST')
  assertContract(t, 'GET', MCP, get)
})

t.test('the SDK\'s own client over real HTTP', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const client = new Client({ name: 'tap-e2e', version: '1.0.0' })
  const transport = new StreamableHTTPClientTransport(
    new URL(`http://127.0.0.1:${port}${MCP}`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }
  )
  await client.connect(transport)
  t.teardown(async () => { await client.close() })
  t.match(client.getServerVersion(), { name: 'workspace-service' })

  const { tools } = await client.listTools()
  t.equal(tools.length, 16)
  // The client checks structuredContent against each tool's outputSchema (the contract's).
  const invited = await client.callTool({ name: 'invite_user', arguments: { email: 'e2e@example.com' } })
  t.match(invited, { structuredContent: { success: true } })
  const listed = await client.callTool({ name: 'list_invitations', arguments: { status: 'pending' } })
  t.match(listed.structuredContent, { items: [{ email: 'e2e@example.com', role: 'member' }], nextCursor: null })
  const dup = await client.callTool({ name: 'invite_user', arguments: { email: admin.email } })
  t.equal(dup.isError, true)
  t.match(JSON.parse((dup.content as Array<{ text: string }>)[0]?.text ?? ''), { code: 'USER_EXISTS' })

  // Revoking the key mid-session: the next call fails at the HTTP layer with 401.
  const keys = await h.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie: admin.cookie } })
  await h.inject({
    method: 'DELETE',
    url: `/api/api-keys/${keys.json().items[0].id as string}`,
    headers: { cookie: admin.cookie }
  })
  await t.rejects(client.listTools(), /401|Authentication required/)
})

t.test('invite requests: list, approve (without the signup link), deny; one decision only', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  await h.app.services.workspaceSettings.update(
    principalOf(admin, 'admin'),
    { invitePolicy: 'request' }
  )
  const asMember = principalOf(member, 'member')
  const a = await h.app.services.inviteRequests.request(asMember, { email: 'req-a@example.com', role: 'member' })
  const b = await h.app.services.inviteRequests.request(asMember, { email: 'req-b@example.com', role: 'member' })

  const listed = await callTool(key, 'list_invite_requests', { status: 'pending' })
  const rest = await h.inject({ method: 'GET', url: '/api/invite-requests?status=pending', headers: { cookie: admin.cookie } })
  t.same(listed.structuredContent, rest.json(), 'list_invite_requests answers what GET /api/invite-requests answers')
  t.equal((listed.structuredContent?.items as unknown[]).length, 2)

  const approved = await callTool(key, 'approve_invite_request', { id: a.row.id, role: 'admin' })
  t.notOk(approved.isError)
  t.match(approved.structuredContent, { request: { id: a.row.id, status: 'approved', role: 'admin' }, invitation: { success: true } })
  t.notOk('invitationUrl' in (approved.structuredContent?.invitation as object), 'no signup link for the assistant')
  t.equal(toolErrorOf(await callTool(key, 'approve_invite_request', { id: a.row.id })).code, 'INVITE_REQUEST_NOT_PENDING')

  const denied = await callTool(key, 'deny_invite_request', { id: b.row.id, reason: 'not now' })
  t.match(denied.structuredContent, { id: b.row.id, status: 'denied', reason: 'not now' })
  t.equal(toolErrorOf(await callTool(key, 'deny_invite_request', { id: 'nope' })).code, 'VALIDATION_FAILED')
})

t.test('suspend_member and reactivate_member: the member is refused at once, the role kept; the rules REST holds', async t => {
  const admin = await h.signIn()
  const key = await newKey(admin)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const otherAdmin = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const me = async (who: SignedIn) =>
    (await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: who.cookie } })).statusCode

  const suspended = await callTool(key, 'suspend_member', { id: member.userId })
  t.notOk(suspended.isError)
  t.match(suspended.structuredContent, { id: member.userId, role: 'member', status: 'suspended' })
  t.equal(await me(member), 401, 'their session is refused at once')
  const audit = await h.inject({
    method: 'GET', url: `/api/audit-events?targetType=user&targetId=${member.userId}`, headers: { cookie: admin.cookie }
  })
  t.match(audit.json().items, [{ action: 'member.suspended', actor: { type: 'api_key' }, source: 'mcp' }],
    'recorded as the key, through the MCP door')

  // A key that may not make or unmake admins does not suspend one; the last active admin is kept.
  const writer = (await createApiKey(h, admin, 'writer', ['members:read', 'members:write'])).secret
  t.equal(toolErrorOf(await callTool(writer, 'suspend_member', { id: otherAdmin.userId })).code, 'INSUFFICIENT_SCOPE')
  t.equal(await me(otherAdmin), 200, 'the admin is untouched')
  t.notOk((await callTool(key, 'suspend_member', { id: otherAdmin.userId })).isError)
  t.equal(toolErrorOf(await callTool(key, 'suspend_member', { id: admin.userId })).code, 'LAST_ADMIN')
  t.equal(toolErrorOf(await callTool(key, 'suspend_member', { id: 'nope' })).code, 'VALIDATION_FAILED')
  const stranger = await newKey(await h.signIn())
  t.equal(toolErrorOf(await callTool(stranger, 'suspend_member', { id: member.userId })).code, 'NOT_FOUND')

  const back = await callTool(key, 'reactivate_member', { id: otherAdmin.userId })
  t.match(back.structuredContent, { id: otherAdmin.userId, role: 'admin', status: 'active' }, 'with the role they had')
  t.equal(await me(otherAdmin), 401, 'their old session stays ended')
  t.match((await callTool(key, 'reactivate_member', { id: member.userId })).structuredContent, { status: 'active' })
  t.match((await h.inject({
    method: 'GET', url: '/api/audit-events?action=member.reactivated', headers: { cookie: admin.cookie }
  })).json().items, [{ source: 'mcp' }, { source: 'mcp' }])
})
