import t from 'tap'
import { randomUUID } from 'node:crypto'
import { isScimError, scimFixture } from '../helpers/scim.js'

// Okta's SCIM 2.0 provisioning test (its "SCIM 2.0 Test App" spec, run against a SCIM server
// before an app is submitted), request for request: the shapes are copied from Okta's
// documentation ("Test your SCIM API", developer.okta.com). Runs on PGlite, and on PostgreSQL
// when TEST_DATABASE_URL is set (test/helpers/build.ts).

t.test("Okta's SCIM 2.0 spec test: users, lookups, duplicates, deactivation", async t => {
  const { scim, admin, h } = await scimFixture(t)
  const tag = randomUUID().slice(0, 8)
  const userName = `okta-${tag}@example.com`

  // 1. Required: the list answers a ListResponse (Okta checks Resources and the paging fields).
  const first = await scim('GET', '/api/scim/v2/Users?count=1&startIndex=1')
  t.equal(first.status, 200)
  t.same(first.problems, [])
  t.equal(first.res.headers['content-type'], 'application/scim+json; charset=utf-8')
  t.same(first.body.schemas, ['urn:ietf:params:scim:api:messages:2.0:ListResponse'])
  t.equal(first.body.itemsPerPage, 1, 'one of the workspace\'s members (the admin)')
  t.equal(first.body.startIndex, 1)
  t.equal(first.body.totalResults, 1)
  t.equal(first.body.Resources[0].userName, admin.email, 'a member the directory did not make is listed by address')

  // 2. The lookup before a create: nobody by that userName.
  const none = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`)
  t.equal(none.status, 200)
  t.equal(none.body.totalResults, 0)
  t.same(none.body.Resources, [])

  // 3. Create (Okta sends a password and an empty groups list; both are ignored).
  const created = await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName: 'Grace', familyName: 'Hopper' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    active: true,
    password: '1mz050nq',
    groups: []
  })
  t.equal(created.status, 201, created.res.body)
  t.same(created.problems, [])
  t.match(created.body, {
    userName, active: true, name: { givenName: 'Grace', familyName: 'Hopper' }, emails: [{ value: userName, primary: true }]
  })
  const id = created.body.id as string
  t.equal(created.body.meta.location, `${h.config.publicUrl}/api/scim/v2/Users/${id}`)

  // 4. Read it back by id; 5. find it by userName, in another case (compared case-insensitively).
  const got = await scim('GET', `/api/scim/v2/Users/${id}`)
  t.equal(got.status, 200)
  t.equal(got.body.userName, userName)
  const found = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName.toUpperCase()}"`)}`)
  t.equal(found.body.totalResults, 1)
  t.equal(found.body.Resources[0].id, id)

  // 6. The same user again: 409 uniqueness.
  const dup = await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName,
    name: { givenName: 'Grace', familyName: 'Hopper' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    active: true
  })
  t.equal(dup.status, 409)
  t.ok(isScimError(dup.body, 409, 'uniqueness'), dup.res.body)
  t.same(dup.problems, [])

  // 7. An unknown userName: none; 8. an unknown id: 404 as a SCIM error.
  const ghost = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent('userName eq "ghost@example.com"')}`)
  t.equal(ghost.body.totalResults, 0)
  const missing = await scim('GET', `/api/scim/v2/Users/${randomUUID()}`)
  t.equal(missing.status, 404)
  t.ok(isScimError(missing.body, 404))
  t.same(missing.problems, [])

  // Profile update (PUT), then Okta's deactivation: a path-less replace with {"active": false}.
  const put = await scim('PUT', `/api/scim/v2/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    id,
    userName,
    name: { givenName: 'Grace', familyName: 'Murray' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    active: true
  })
  t.equal(put.status, 200, put.res.body)
  t.equal(put.body.name.familyName, 'Murray')
  const off = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', value: { active: false } }]
  })
  t.equal(off.status, 200, off.res.body)
  t.equal(off.body.active, false, 'deactivated: the member is suspended')
  const inactive = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(`userName eq "${userName}" and active eq false`)}`)
  t.equal(inactive.body.totalResults, 1, 'eq and `and` on active')
  const on = await scim('PATCH', `/api/scim/v2/Users/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', value: { active: true } }]
  })
  t.equal(on.body.active, true, 'reactivated')
  const { rows } = await h.db.query<{ status: string, role: string }>('SELECT status, role FROM users WHERE id = $1', [id])
  t.same(rows, [{ status: 'active', role: 'member' }])
})

t.test("Okta's group push: create, rename without a path, add and remove members", async t => {
  const { scim } = await scimFixture(t)
  const user = async (n: string) => (await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
    userName: `${n}-${randomUUID().slice(0, 6)}@example.com`,
    name: { givenName: n, familyName: 'Test' },
    active: true
  })).body.id as string
  const a = await user('ada')
  const b = await user('bob')
  const group = await scim('POST', '/api/scim/v2/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Test SCIMv2', members: [{ value: a, display: 'ada' }]
  })
  t.equal(group.status, 201, group.res.body)
  t.same(group.problems, [])
  const id = group.body.id as string
  const renamed = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'replace', value: { id, displayName: 'Test SCIMv2 renamed' } }]
  })
  t.equal(renamed.status, 200, renamed.res.body)
  t.equal(renamed.body.displayName, 'Test SCIMv2 renamed')
  const added = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'add', path: 'members', value: [{ value: b, display: 'bob' }] }]
  })
  t.same(added.body.members.map((m: { value: string }) => m.value).sort(), [a, b].sort())
  const removed = await scim('PATCH', `/api/scim/v2/Groups/${id}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
    Operations: [{ op: 'remove', path: `members[value eq "${a}"]` }]
  })
  t.equal(removed.status, 200, removed.res.body)
  t.same(removed.body.members.map((m: { value: string }) => m.value), [b])
  const dup = await scim('POST', '/api/scim/v2/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'test scimv2 RENAMED' })
  t.ok(isScimError(dup.body, 409, 'uniqueness'), 'a group name is unique case-insensitively')
  const gone = await scim('DELETE', `/api/scim/v2/Groups/${id}`)
  t.equal(gone.status, 204)
  t.equal((await scim('GET', `/api/scim/v2/Groups/${id}`)).status, 404)
})
