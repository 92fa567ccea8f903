import t from 'tap'
import { assertContract } from '../helpers/contract.js'
import { createApiKey } from '../helpers/mcp.js'
import { scimFixture } from '../helpers/scim.js'

// Who manages a member (issue 56, item 2): a member the directory provisioned says so
// (`managedBy: directory`); an admin may always suspend them — a security team cannot wait for a
// sync — but may not reactivate someone their directory deactivated (403 MANAGED_BY_DIRECTORY),
// else SCIM would report them active while the directory has them off. The directory reactivates
// them; an admin reactivates whom an admin suspended. Read through GET /api/users/{userId}.

const DEACTIVATE = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] }
const ACTIVATE = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: true } }] }

t.test('a member the directory deactivated: shown as managed, reactivated by the directory alone', async t => {
  const { h, admin, scim } = await scimFixture(t)
  const headers = { cookie: admin.cookie }
  const created = await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'grace@example.com', active: true
  })
  t.equal(created.status, 201)
  const id = String(created.body.id)
  const read = async () => {
    const res = await h.inject({ url: `/api/users/${id}`, headers })
    assertContract(t, 'GET', `/api/users/${id}`, res)
    return res.json()
  }
  t.match(await read(), { email: 'grace@example.com', status: 'active', managedBy: 'directory', suspendedBy: null, invitedBy: null },
    'GET /api/users/{userId}: the directory manages them, nobody invited them')

  t.equal((await scim('PATCH', `/api/scim/v2/Users/${id}`, DEACTIVATE)).status, 200)
  t.match(await read(), { status: 'suspended', suspendedBy: 'directory' }, 'the directory deactivated them')
  const refused = await h.inject({ method: 'POST', url: `/api/users/${id}/reactivate`, headers })
  t.equal(refused.statusCode, 403)
  assertContract(t, 'POST', `/api/users/${id}/reactivate`, refused)
  t.equal(refused.json().code, 'MANAGED_BY_DIRECTORY', 'an admin cannot reactivate them')
  t.equal((await scim('GET', `/api/scim/v2/Users/${id}`)).body.active, false, 'and the directory and the service still agree')

  t.equal((await scim('PATCH', `/api/scim/v2/Users/${id}`, ACTIVATE)).status, 200)
  t.match(await read(), { status: 'active', suspendedBy: null }, 'the directory reactivates them')

  const suspended = await h.inject({ method: 'POST', url: `/api/users/${id}/suspend`, headers })
  t.equal(suspended.statusCode, 200, 'an admin may always suspend a managed member')
  t.match(suspended.json(), { status: 'suspended', suspendedBy: 'admin', managedBy: 'directory' })
  const back = await h.inject({ method: 'POST', url: `/api/users/${id}/reactivate`, headers })
  t.equal(back.statusCode, 200, 'and reactivate whom an admin suspended')
})

t.test('GET /api/users/{userId}: admins and members:read keys, this workspace only', async t => {
  const { h, admin } = await scimFixture(t)
  const other = await h.signIn({ role: 'admin', email: 'other@example.org' })
  const mine = await h.inject({ url: `/api/users/${admin.userId}`, headers: { cookie: admin.cookie } })
  t.equal(mine.statusCode, 200)
  t.match(mine.json(), { id: admin.userId, managedBy: null, invitedBy: null })
  const foreign = await h.inject({ url: `/api/users/${other.userId}`, headers: { cookie: admin.cookie } })
  t.equal(foreign.statusCode, 404, 'another workspace\'s member is not found')
  assertContract(t, 'GET', `/api/users/${other.userId}`, foreign)
  const reader = await createApiKey(h, admin, 'reader', ['members:read'])
  const byKey = await h.inject({ url: `/api/users/${admin.userId}`, headers: { authorization: `Bearer ${reader.secret}` } })
  t.equal(byKey.statusCode, 200, 'a key with members:read')
  const writer = await createApiKey(h, admin, 'writer', ['invitations:write'])
  const refused = await h.inject({ url: `/api/users/${admin.userId}`, headers: { authorization: `Bearer ${writer.secret}` } })
  t.equal(refused.statusCode, 403)
  t.equal(refused.json().code, 'INSUFFICIENT_SCOPE')
})
