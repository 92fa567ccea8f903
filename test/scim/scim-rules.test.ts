import t from 'tap'
import { randomUUID } from 'node:crypto'
import { ERROR_SCHEMA, isScimError, scimFixture, SCIM_TYPE } from '../helpers/scim.js'
import { createApiKey } from '../helpers/mcp.js'

// The rules around the two directories' flows: who may call (the workspace's directory key), what
// every error looks like (SCIM errors, the framework's own included), what another workspace's
// ids are (404), paging, attribute selection, linking an existing member, and the admins' group
// under the last-admin rule.

const user = (userName: string, more: Record<string, unknown> = {}) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, active: true, ...more
})

t.test('authentication: the directory key alone; every refusal a SCIM error', async t => {
  const { h, admin, scim } = await scimFixture(t)
  const anonymous = await h.inject({ method: 'GET', url: '/api/scim/v2/Users' })
  t.equal(anonymous.statusCode, 401)
  t.ok(isScimError(anonymous.json(), 401), anonymous.body)
  t.match(anonymous.headers['www-authenticate'], /^Bearer /)
  t.equal(anonymous.headers['content-type'], 'application/scim+json; charset=utf-8')
  const wrong = await h.inject({ method: 'GET', url: '/api/scim/v2/Users', headers: { authorization: 'Bearer wsk_nope' } })
  t.ok(isScimError(wrong.json(), 401))
  const other = await createApiKey(h, admin, 'reader', ['members:read'])
  const scopeless = await h.inject({
    method: 'GET', url: '/api/scim/v2/ServiceProviderConfig', headers: { authorization: `Bearer ${other.secret}` }
  })
  t.equal(scopeless.statusCode, 403)
  t.ok(isScimError(scopeless.json(), 403), scopeless.body)
  const config = await scim('GET', '/api/scim/v2/ServiceProviderConfig')
  t.equal(config.status, 200)
  t.equal(config.body.filter.maxResults, 100)
  t.same(config.problems, [])
  for (const path of ['/api/scim/v2/ResourceTypes', '/api/scim/v2/Schemas']) {
    const res = await scim('GET', path)
    t.equal(res.status, 200, path)
    t.same(res.problems, [], path)
  }
})

t.test("the framework's own errors under /api/scim/v2 are SCIM errors", async t => {
  const { scim } = await scimFixture(t)
  const unknown = await scim('GET', '/api/scim/v2/Nope')
  t.ok(isScimError(unknown.body, 404), 'a path the contract does not list')
  const method = await scim('PATCH', '/api/scim/v2/Users')
  t.ok(isScimError(method.body, 404), 'a method it does not list')
  const malformed = await scim('POST', '/api/scim/v2/Users', '{"userName":')
  t.ok(isScimError(malformed.body, 400, 'invalidSyntax'), malformed.res.body)
  const invalid = await scim('POST', '/api/scim/v2/Users', { schemas: [], userName: 5 })
  t.ok(isScimError(invalid.body, 400, 'invalidValue'), invalid.res.body)
  t.same(invalid.problems, [])
  const form = await scim('POST', '/api/scim/v2/Users', 'userName=x', { 'content-type': 'application/x-www-form-urlencoded' })
  t.ok(isScimError(form.body, 415), form.res.body)
  t.same(form.problems, [])
  const huge = await scim('POST', '/api/scim/v2/Users', { userName: 'x'.repeat(2_000_000) })
  t.ok(isScimError(huge.body, 413), huge.res.body.slice(0, 200))
  const json = await scim('POST', '/api/scim/v2/Users', user(`json-${randomUUID().slice(0, 6)}@example.com`), { 'content-type': 'application/json' })
  t.equal(json.status, 201, 'application/json is taken too')
  const filter = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent('userName eq')}`)
  t.ok(isScimError(filter.body, 400, 'invalidFilter'), filter.res.body)
  const unknownAttr = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent('nickName eq "x"')}`)
  t.ok(isScimError(unknownAttr.body, 400, 'invalidFilter'), unknownAttr.res.body)
  t.same(unknownAttr.problems, [])
})

t.test("SCIM's media type is refused where the contract does not take it", async t => {
  const { h, admin } = await scimFixture(t)
  const res = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie, 'content-type': SCIM_TYPE },
    payload: JSON.stringify({ email: 'x@example.com', role: 'member' })
  })
  t.equal(res.statusCode, 415)
  t.equal(res.json().code, 'UNSUPPORTED_MEDIA_TYPE', 'and outside /api/scim/v2 errors stay ErrorResponses')
})

t.test("another workspace's users and groups are 404", async t => {
  const a = await scimFixture(t)
  const mine = await a.scim('POST', '/api/scim/v2/Users', user(`mine-${randomUUID().slice(0, 6)}@example.com`))
  const group = await a.scim('POST', '/api/scim/v2/Groups', { schemas: [], displayName: 'Mine' })
  const otherAdmin = await a.h.signIn({ role: 'admin' })
  const otherKey = await createApiKey(a.h, otherAdmin, 'Entra', ['scim'])
  const as = (method: 'GET' | 'DELETE' | 'PATCH', url: string) => a.h.inject({
    method,
    url,
    headers: { authorization: `Bearer ${otherKey.secret}`, 'content-type': SCIM_TYPE },
    ...(method === 'PATCH' ? { payload: JSON.stringify({ schemas: [], Operations: [{ op: 'replace', path: 'active', value: false }] }) } : {})
  })
  for (const [method, url] of [
    ['GET', `/api/scim/v2/Users/${mine.body.id as string}`], ['PATCH', `/api/scim/v2/Users/${mine.body.id as string}`],
    ['DELETE', `/api/scim/v2/Users/${mine.body.id as string}`], ['GET', `/api/scim/v2/Groups/${group.body.id as string}`],
    ['DELETE', `/api/scim/v2/Groups/${group.body.id as string}`], ['GET', '/api/scim/v2/Users/not-a-uuid']
  ] as const) {
    const res = await as(method, url)
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.ok(isScimError(res.json(), 404))
  }
  const list = await as('GET', '/api/scim/v2/Users')
  t.equal(list.json().totalResults, 1, 'its own admin only')
})

t.test('paging: a stable order, count capped at 100, attributes chosen', async t => {
  const { scim } = await scimFixture(t)
  for (let i = 0; i < 4; i++) await scim('POST', '/api/scim/v2/Users', user(`page-${i}-${randomUUID().slice(0, 6)}@example.com`))
  const all = await scim('GET', '/api/scim/v2/Users?count=1000')
  t.equal(all.body.totalResults, 5)
  t.equal(all.body.itemsPerPage, 5, 'count above 100 is read as 100')
  const ids = all.body.Resources.map((r: { id: string }) => r.id)
  const pages = []
  for (let i = 1; i <= 5; i += 2) pages.push(...(await scim('GET', `/api/scim/v2/Users?startIndex=${i}&count=2`)).body.Resources.map((r: { id: string }) => r.id))
  t.same(pages, ids, 'pages follow one order')
  const past = await scim('GET', '/api/scim/v2/Users?startIndex=50&count=10')
  t.same([past.body.totalResults, past.body.Resources], [5, []])
  const counted = await scim('GET', '/api/scim/v2/Users?count=0')
  t.same([counted.body.totalResults, counted.body.itemsPerPage], [5, 0])
  const some = await scim('GET', '/api/scim/v2/Users?attributes=userName&count=1')
  t.same(Object.keys(some.body.Resources[0]).sort(), ['id', 'schemas', 'userName'])
  const less = await scim('GET', '/api/scim/v2/Users?excludedAttributes=groups,meta,name.givenName&count=1')
  t.notOk('meta' in less.body.Resources[0])
  t.same(less.problems, [])
})

t.test('a create for an existing member links them; another workspace\'s address is refused', async t => {
  const { h, admin, scim } = await scimFixture(t)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const linked = await scim('POST', '/api/scim/v2/Users', user(member.email.toUpperCase(), { externalId: 'okta-123' }))
  t.equal(linked.status, 201, linked.res.body)
  t.equal(linked.body.id, member.userId, 'the existing member, linked')
  t.equal(linked.body.externalId, 'okta-123')
  const again = await scim('POST', '/api/scim/v2/Users', user(member.email, { externalId: 'okta-456' }))
  t.ok(isScimError(again.body, 409, 'uniqueness'), 'a member the directory holds is not linked twice')
  const outsider = await h.signIn({ role: 'admin' })
  const foreign = await scim('POST', '/api/scim/v2/Users', user(outsider.email))
  t.ok(isScimError(foreign.body, 409, 'uniqueness'), foreign.res.body)
  const clash = await scim('POST', '/api/scim/v2/Users', user(`new-${randomUUID().slice(0, 6)}@example.com`, { externalId: 'okta-123' }))
  t.ok(isScimError(clash.body, 409, 'uniqueness'), 'an externalId another member holds')
})

t.test('the directory key belongs to the workspace: it outlives its creator; an admin revokes it', async t => {
  const { h, admin, key, scim } = await scimFixture(t)
  const other = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const removed = await h.inject({ method: 'DELETE', url: `/api/users/${admin.userId}`, headers: { cookie: other.cookie } })
  t.equal(removed.statusCode, 204)
  t.equal((await scim('GET', '/api/scim/v2/Users')).status, 200, 'the creator is removed; the key still works')
  const listed = await h.inject({ method: 'GET', url: '/api/api-keys', headers: { cookie: other.cookie } })
  t.ok(listed.json().items.some((k: { id: string }) => k.id === key.id), 'and is still listed for the admins')
  const revoked = await h.inject({ method: 'DELETE', url: `/api/api-keys/${key.id}`, headers: { cookie: other.cookie } })
  t.equal(revoked.statusCode, 204)
  const after = await scim('GET', '/api/scim/v2/Users')
  t.ok(isScimError(after.body, 401), 'revoked by an admin: refused')
})

t.test("the admins' group sets roles of the directory's members only, and keeps an active admin", async t => {
  const { h, admin, scim } = await scimFixture(t)
  const settings = await h.inject({
    method: 'PATCH',
    url: '/api/workspace/settings',
    headers: { cookie: admin.cookie },
    payload: { directory: { adminGroup: 'Workspace Admins' } }
  })
  t.equal(settings.statusCode, 200, settings.body)
  t.same(settings.json().directory, { adminGroup: 'Workspace Admins', welcomeEmail: false }, 'welcome e-mails are off by default')
  const provisioned = (await scim('POST', '/api/scim/v2/Users', user(`boss-${randomUUID().slice(0, 6)}@example.com`))).body.id as string
  const group = await scim('POST', '/api/scim/v2/Groups', {
    schemas: [], displayName: 'workspace admins', members: [{ value: provisioned }, { value: admin.userId }]
  })
  t.equal(group.status, 201, group.res.body)
  const role = async (id: string) => (await h.db.query<{ role: string }>('SELECT role FROM users WHERE id = $1', [id])).rows[0]?.role
  t.equal(await role(provisioned), 'admin', 'a provisioned member in the group is an admin')
  t.equal(await role(admin.userId), 'admin', 'a member the directory did not make keeps their role')
  // The service's own admin steps down: the directory's admin is the last active admin.
  const demoted = await h.inject({
    method: 'PATCH', url: `/api/users/${admin.userId}`, headers: { cookie: admin.cookie }, payload: { role: 'member' }
  })
  t.equal(demoted.statusCode, 200, demoted.body)
  const drop = await scim('PATCH', `/api/scim/v2/Groups/${group.body.id as string}`, {
    schemas: [], Operations: [{ op: 'remove', path: `members[value eq "${provisioned}"]` }]
  })
  t.equal(drop.status, 409, drop.res.body)
  t.equal(drop.body.schemas[0], ERROR_SCHEMA, 'refused as a SCIM error, never silently')
  t.equal(await role(provisioned), 'admin', 'nothing changed')
  const gone = await scim('DELETE', `/api/scim/v2/Users/${provisioned}`)
  t.equal(gone.status, 409, 'nor is the last active admin removed')
})

t.test('active=false suspends through the member status core: sessions end at once, events say directory', async t => {
  const { h, admin, scim } = await scimFixture(t)
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const me = async () => (await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: member.cookie } })).statusCode
  t.equal(await me(), 200)
  const linked = await scim('POST', '/api/scim/v2/Users', user(member.email))
  t.equal(linked.body.id, member.userId)
  const off = await scim('PATCH', `/api/scim/v2/Users/${member.userId}`, {
    schemas: [], Operations: [{ op: 'Replace', path: 'active', value: 'False' }]
  })
  t.equal(off.body.active, false)
  t.equal(await me(), 401, 'their session is refused at once')
  const events = await h.db.query<{ action: string, source: string, actor_type: string }>(
    "SELECT action, source, actor_type FROM audit_events WHERE target_id = $1 AND action LIKE 'member.%' ORDER BY created_at, id",
    [member.userId])
  t.match(events.rows, [{ action: 'member.suspended', source: 'directory', actor_type: 'api_key' }])
  const on = await scim('PUT', `/api/scim/v2/Users/${member.userId}`, user(member.email, { active: true }))
  t.equal(on.body.active, true, 'PUT active=true reactivates')
  const last = await scim('PATCH', `/api/scim/v2/Users/${admin.userId}`, {
    schemas: [], Operations: [{ op: 'replace', value: { active: false } }]
  })
  t.equal(last.status, 409, 'the last active admin is not suspended')
  t.ok(isScimError(last.body, 409), last.res.body)
})
