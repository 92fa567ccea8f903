import t from 'tap'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { build } from '../helpers/build.js'
import { clientDir, ensureClientBuilt } from '../../scripts/lib/client-build.js'
import { readContract } from '../../scripts/lib/contract-project.js'
import { projectRoot } from '../../src/paths.js'
import { loadContract } from '../../src/app.js'
import type * as Client from '../../clients/typescript/src/index.js'

// The typed client package (clients/typescript/) as a consumer uses it: its built dist/ (the
// types are those of its source) against the service listening on loopback, built on the
// embedded defaults. First run: setup signs the first admin in (the client keeps the session
// cookie), an API key is made with scopes, people are invited and listed with the key on REST
// and on MCP; the key is refused, typed, where its scopes stop (INSUFFICIENT_SCOPE) and where keys
// never go (API_KEY_NOT_ALLOWED). And
// on a copy of the contract with an operation deprecated, the client reports what the service said.

const contractVersion = String((readContract(join(projectRoot, 'openapi.yaml')).info as { version: string }).version)

t.test('the package: setup, an API key, invite and list against the running service', async t => {
  await ensureClientBuilt()
  const pkg = await import(pathToFileURL(join(clientDir, 'dist', 'index.js')).href) as typeof Client
  const h = await build(t, { env: { AUTH_RATE_LIMIT_PER_MINUTE: '1000' } })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const baseUrl = `http://127.0.0.1:${port}`

  const deprecations: Client.DeprecationNotice[] = []
  const api: Client.WorkspaceClient = pkg.createWorkspaceClient({
    baseUrl, keepSession: true, onDeprecation: n => { deprecations.push(n) }
  })

  const health = await api.GET('/api/health')
  t.equal(health.data?.status, 'ok')
  t.equal(health.data?.version, contractVersion, 'the service runs the contract the client was built from')
  t.equal(health.response.headers.get('api-version'), contractVersion)

  // Setup: the first admin, signed in by the answer's cookie, which the client keeps.
  const link = await h.app.services.setup.issueLink() ?? ''
  const token = new URL(link).searchParams.get('token') ?? ''
  const setup = await api.POST('/api/setup', {
    body: { token, workspaceName: 'Client Package Co', email: 'owner@example.com', name: 'Owner' }
  })
  t.equal(setup.response.status, 201, setup.error?.message ?? 'set up')
  const me = await api.GET('/api/users/me')
  t.equal(me.response.status, 200, 'the session cookie kept by the client signs the next call in')
  const role: 'admin' | 'member' | undefined = me.data?.user.role
  t.equal(role, 'admin')
  t.equal(me.data?.user.email, 'owner@example.com')

  const key = await api.POST('/api/api-keys', {
    body: { name: 'client package test', scopes: ['invitations:read', 'invitations:write', 'members:read'] }
  })
  t.equal(key.response.status, 201)
  const secret: string = key.data?.secret ?? ''
  t.match(secret, /^wsk_/, 'the secret, typed ApiKeyCreated')

  const invited = await api.POST('/api/users/invite', { body: { email: 'ada@example.com', role: 'member' } })
  t.equal(invited.response.status, 200, invited.error?.message ?? 'invited')
  const sent: Client.Schemas['InviteUserResponse'] | undefined = invited.data
  t.equal(sent?.success, true)
  t.match(sent?.invitationUrl, /\/signup\?token=/)

  const refused = await api.POST('/api/users/invite', { body: { email: 'not an address', role: 'member' } })
  t.equal(refused.response.status, 400)
  const code: Client.Schemas['ErrorResponse']['code'] | undefined = refused.error?.code
  t.equal(code, 'VALIDATION_FAILED', 'errors arrive typed as ErrorResponse')

  // The API key, on REST and on MCP, within its scopes.
  const bot = pkg.createWorkspaceClient({ baseUrl, apiKey: secret })
  const byKey = await bot.POST('/api/users/invite', { body: { email: 'linus@example.com', role: 'member' } })
  t.equal(byKey.response.status, 200, byKey.error?.message ?? 'invited over REST with the key')
  const members = await bot.GET('/api/users')
  t.equal(members.response.status, 200, 'members:read lists the members')
  t.same(members.data?.items.map(u => u.email), ['owner@example.com'])
  const audit = await bot.GET('/api/audit-events')
  t.equal(audit.response.status, 403, 'without audit:read the trail is refused')
  const scopeCode: Client.Schemas['ErrorResponse']['code'] | undefined = audit.error?.code
  t.equal(scopeCode, 'INSUFFICIENT_SCOPE')
  t.match(audit.response.headers.get('www-authenticate'), /error="insufficient_scope", scope="audit:read"/)
  const keyForKey = await bot.POST('/api/api-keys', { body: { name: 'child', scopes: ['audit:read'] } })
  t.equal(keyForKey.error?.code, 'API_KEY_NOT_ALLOWED', 'a key cannot make a key')
  const viaMcp = await bot.POST('/api/mcp', {
    headers: { accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'invite_user', arguments: { email: 'grace@example.com' } }
    }
  })
  t.equal(viaMcp.response.status, 200)
  t.match(viaMcp.data, { id: 1, result: { structuredContent: { success: true } } }, 'invited with the key')
  const wrongKey = await pkg.createWorkspaceClient({ baseUrl, apiKey: `${secret.slice(0, -1)}x` }).GET('/api/invitations')
  t.equal(wrongKey.response.status, 401)
  t.equal(wrongKey.error?.code, 'UNAUTHENTICATED')

  const listed = await bot.GET('/api/invitations', { params: { query: { status: 'pending', limit: 10 } } })
  t.equal(listed.response.status, 200, 'invitations:read lists them with the key')
  const items: Array<Client.Schemas['Invitation']> = listed.data?.items ?? []
  t.same(
    items.map(i => i.email).sort(), ['ada@example.com', 'grace@example.com', 'linus@example.com'],
    'every invitation, typed Invitation'
  )
  t.ok(items.every(i => i.status === 'pending' && i.role === 'member'))

  const out = await api.POST('/api/auth/logout')
  t.equal(out.response.status, 204)
  const after = await api.GET('/api/users/me')
  t.equal(after.response.status, 401, 'signed out: the client dropped the cleared cookie')
  t.same(deprecations, [], 'the contract deprecates nothing these calls use')
})

t.test('the package reports what the service says is deprecated', async t => {
  await ensureClientBuilt()
  const pkg = await import(pathToFileURL(join(clientDir, 'dist', 'index.js')).href) as typeof Client
  // A copy of the contract with GET /api/invitations deprecated (no real operation is).
  const contract = loadContract() as { paths: Record<string, Record<string, Record<string, unknown>>> }
  Object.assign(contract.paths['/api/invitations']?.get ?? {}, {
    deprecated: true, 'x-deprecated-at': '2026-11-01', 'x-sunset': '2027-05-31'
  })
  const h = await build(t, { contract })
  await h.app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = h.app.server.address() as { port: number }
  const admin = await h.signIn()
  const notices: Client.DeprecationNotice[] = []
  const api = pkg.createWorkspaceClient({
    baseUrl: `http://127.0.0.1:${port}`,
    headers: { cookie: admin.cookie },
    onDeprecation: n => { notices.push(n) }
  })
  t.equal((await api.GET('/api/users/me')).response.status, 200)
  t.same(notices, [], 'nothing deprecated, no notice')
  const listed = await api.GET('/api/invitations')
  t.equal(listed.response.status, 200)
  t.same(notices, [{
    method: 'GET',
    path: '/api/invitations',
    deprecation: '@1793491200',
    sunset: 'Mon, 31 May 2027 00:00:00 GMT',
    link: `<${h.config.publicUrl}/api/docs>; rel="deprecation"`
  }], 'the Deprecation, Sunset and Link of the answer')
})
