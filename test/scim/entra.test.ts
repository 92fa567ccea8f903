import t from 'tap'
import { randomUUID } from 'node:crypto'
import { isScimError, scimFixture } from '../helpers/scim.js'

// Microsoft Entra ID's provisioning requests, as its SCIM validator and the "Develop and plan
// provisioning for a SCIM endpoint" tutorial (learn.microsoft.com) publish them: capitalised ops,
// value filters in paths, "True"/"False" strings, path-less replace with dotted keys, members
// removed by a value array, groups read with excludedAttributes=members.

const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp'

t.test("Entra ID's user flow: create, query, multi- and single-valued updates, disable, delete", async t => {
  const { scim, h } = await scimFixture(t)
  const tag = randomUUID()
  const userName = `Test_User_${tag}`
  const created = await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User', 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User'],
    externalId: tag,
    userName,
    active: true,
    emails: [{ primary: true, type: 'work', value: `Test_User_${tag.slice(0, 8)}@testuser.com` }],
    meta: { resourceType: 'User' },
    name: { formatted: 'givenName familyName', familyName: 'familyName', givenName: 'givenName' },
    roles: []
  })
  t.equal(created.status, 201, created.res.body)
  t.same(created.problems, [])
  const id = created.body.id as string
  t.equal(created.body.userName, userName, 'a userName that is no address is kept as the directory\'s name')
  t.equal(created.body.emails[0].value, `test_user_${tag.slice(0, 8)}@testuser.com`, 'the address comes from emails')

  const byName = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`)
  t.equal(byName.body.totalResults, 1)
  const byExternal = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`externalId eq "${tag}"`)}`)
  t.equal(byExternal.body.Resources[0]?.id, id)
  const byEmail = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`emails[type eq "work" and value eq "TEST_USER_${tag.slice(0, 8)}@testuser.com"]`)}`)
  t.equal(byEmail.body.totalResults, 1, 'a value filter on emails')

  // Update user [Multi-valued properties]: value filters in paths; an attribute we do not keep.
  const multi = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [
      { op: 'Replace', path: 'emails[type eq "work"].value', value: `updated-${tag.slice(0, 8)}@testuser.com` },
      { op: 'Replace', path: 'emails[type eq "work"].primary', value: true },
      { op: 'Replace', path: 'phoneNumbers[type eq "work"].value', value: '+1 555 0100' },
      { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Research' }
    ]
  })
  t.equal(multi.status, 200, multi.res.body)
  t.equal(multi.body.emails[0].value, `updated-${tag.slice(0, 8)}@testuser.com`)

  // Update user [Single-valued properties]; then a path-less replace with dotted keys.
  const single = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'userName', value: `${tag}@testuser.com` }]
  })
  t.equal(single.body.userName, `${tag}@testuser.com`)
  const dotted = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Replace', value: { 'name.givenName': 'Grace', 'name.familyName': 'Hopper', displayName: 'Grace Hopper' } }]
  })
  t.equal(dotted.status, 200, dotted.res.body)
  t.match(dotted.body, { name: { givenName: 'Grace', familyName: 'Hopper' }, displayName: 'Grace Hopper' })

  // Disable user, with Entra ID's string boolean; then enable with "True".
  const off = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    Operations: [{ op: 'Replace', path: 'active', value: 'False' }], schemas: [PATCH_OP]
  })
  t.equal(off.status, 200, off.res.body)
  t.equal(off.body.active, false)
  const on = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    Operations: [{ op: 'Replace', path: 'active', value: 'True' }], schemas: [PATCH_OP]
  })
  t.equal(on.body.active, true)

  // A change of id is refused as mutability; a path that does not parse as invalidPath.
  const mutate = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'id', value: randomUUID() }]
  })
  t.ok(isScimError(mutate.body, 400, 'mutability'), mutate.res.body)
  const badPath = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'replace', path: 'emails[type eq', value: 'x' }]
  })
  t.equal(badPath.status, 400, badPath.res.body)
  t.equal(badPath.body.schemas[0], 'urn:ietf:params:scim:api:messages:2.0:Error')
  t.same(badPath.problems, [])

  // Delete user: removed (sessions and keys end), then 404.
  t.equal((await scim('DELETE', `/api/scim/v2/Users/${id}`)).status, 204)
  t.equal((await scim('GET', `/api/scim/v2/Users/${id}`)).status, 404)
  const { rows } = await h.db.query<{ status: string }>('SELECT status FROM users WHERE id = $1', [id])
  t.equal(rows[0]?.status, 'removed')
})

t.test("Entra ID's group flow: create, get without members, rename, add and remove members, delete", async t => {
  const { scim } = await scimFixture(t)
  const user = async () => (await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: `m-${randomUUID().slice(0, 8)}@example.com`, active: true
  })).body.id as string
  const member = await user()
  const other = await user()
  const externalId = randomUUID()
  const created = await scim('POST', '/api/scim/v2/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group', 'http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group'],
    externalId,
    displayName: 'displayName',
    meta: { resourceType: 'Group' }
  })
  t.equal(created.status, 201, created.res.body)
  const id = created.body.id as string
  const got = await scim('GET', `/api/scim/v2/Groups/${id}?excludedAttributes=members`)
  t.equal(got.status, 200)
  t.notOk('members' in got.body, 'excludedAttributes=members leaves them out')
  const byName = await scim('GET', `/api/scim/v2/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "displayName"')}`)
  t.equal(byName.body.totalResults, 1)
  t.notOk('members' in byName.body.Resources[0])
  t.same(byName.problems, [])

  const renamed = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'Replace', path: 'displayName', value: `${externalId}updatedDisplayName` }]
  })
  t.equal(renamed.body.displayName, `${externalId}updatedDisplayName`)
  const added = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'Add', path: 'members', value: [{ $ref: null, value: member }, { $ref: null, value: other }] }]
  })
  t.equal(added.status, 200, added.res.body)
  t.equal(added.body.members.length, 2)
  const isIn = await scim('GET', `/api/scim/v2/Groups?filter=${encodeURIComponent(`id eq "${id}" and members[value eq "${member}"]`)}&excludedAttributes=members`)
  t.equal(isIn.body.totalResults, 1, 'membership check by filter')
  const removed = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: [PATCH_OP], Operations: [{ op: 'Remove', path: 'members', value: [{ $ref: null, value: member }] }]
  })
  t.equal(removed.status, 200, removed.res.body)
  t.same(removed.body.members.map((m: { value: string }) => m.value), [other], 'removed by a value array')
  t.equal((await scim('DELETE', `/api/scim/v2/Groups/${id}`)).status, 204)
})
