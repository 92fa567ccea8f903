import t from 'tap'
import { isScimError, scimFixture } from '../helpers/scim.js'

// What a directory's admin reads (issue 56, item 3): a 201 carries Location (RFC 7644 §3.3: SHALL),
// the resource's meta.location; a filter that does not parse is refused saying what is wrong, in
// words, never the parser's ("Unexpected token … as valFilter operator", "[(EOT)] is not json").

t.test('201 Created carries Location, as meta.location, for a User and a Group', async t => {
  const { scim } = await scimFixture(t)
  const user = await scim('POST', '/api/scim/v2/Users', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ada@example.com' })
  t.equal(user.status, 201)
  t.same(user.problems, [])
  t.match(user.res.headers.location, /^https?:\/\/[^/]+\/api\/scim\/v2\/Users\/[0-9a-f-]{36}$/)
  t.equal(user.res.headers.location, user.body.meta.location, 'the User\'s Location')
  const group = await scim('POST', '/api/scim/v2/Groups', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering', members: [{ value: user.body.id }]
  })
  t.equal(group.status, 201)
  t.same(group.problems, [])
  t.equal(group.res.headers.location, group.body.meta.location, 'the Group\'s Location')
})

t.test('a malformed filter is refused in words', async t => {
  const { scim } = await scimFixture(t)
  const cases: Array<[string, RegExp]> = [
    ['userName eq "ada@example.com', /a quoted value is not closed: add the closing "/],
    ['userName equals "ada@example.com"', /"equals" is not an operator: use eq, ne, co, sw, ew, gt, ge, lt, le or pr/],
    ['userName eq', /"userName eq" needs a value after it/],
    ['(userName eq "a"', /a "\(" is not closed: add "\)"/],
    ['userName eq "a" and', /the filter ends with "and": a comparison must follow it/],
    ['userName eq ada', /the value ada must be a quoted string, true, false, null or a number/],
    ['emails[type eq "work"', /a "\[" is not closed: add "\]"/]
  ]
  for (const [filter, words] of cases) {
    const res = await scim('GET', `/api/scim/v2/Users?filter=${encodeURIComponent(filter)}`)
    t.ok(isScimError(res.body, 400, 'invalidFilter'), filter)
    t.match(res.body.detail, words, `${filter}: ${String(res.body.detail)}`)
    t.notMatch(res.body.detail, /token|EOT|valFilter|json/i, 'nothing of the parser\'s words')
  }
})
