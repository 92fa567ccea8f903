import t from 'tap'
import { ERROR_SCHEMA, scimFixture } from '../helpers/scim.js'

// SCIM's base moved under /api in contract 2.1 (/api/scim/v2, as every API path): directories set
// up on /scim/v2 keep working until the sunset, each answer saying so on the wire (RFC 9745
// Deprecation, RFC 8594 Sunset, a Link to the API reference), and both bases serve one directory.

const DEPRECATED = `@${Date.parse('2026-12-07') / 1000}`

t.test('the deprecated /scim/v2 serves the same directory, each answer dated; /api/scim/v2 is not', async t => {
  const { scim } = await scimFixture(t)
  const created = await scim('POST', '/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'grace@example.com', active: true
  })
  t.equal(created.status, 201, JSON.stringify(created.body))
  t.same(created.problems, [], 'the answer is the contract\'s')
  t.equal(created.res.headers.deprecation, DEPRECATED, 'Deprecation: the date it moved')
  t.equal(created.res.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', 'Sunset: more than six months out')
  t.match(created.res.headers.link, /^<https?:\/\/[^>]+\/api\/docs>; rel="deprecation"$/, 'Link: the API reference, which shows it deprecated')
  t.match(created.body.meta.location, /\/api\/scim\/v2\/Users\//, 'resources name their place at the new base')

  const found = await scim('GET', `/api/scim/v2/Users/${String(created.body.id)}`)
  t.equal(found.status, 200, 'the same user at the new base')
  t.equal(found.body.userName, 'grace@example.com')
  t.equal(found.res.headers.deprecation, undefined, 'nothing deprecated there')
  t.equal(found.res.headers.sunset, undefined)

  const patched = await scim('PATCH', `/scim/v2/Users/${String(created.body.id)}`, {
    schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }]
  })
  t.equal(patched.status, 200)
  t.equal(patched.body.active, false, 'a change through the old base is the directory\'s change')

  const missing = await scim('GET', '/scim/v2/Users/00000000-0000-4000-8000-000000000000')
  t.equal(missing.status, 404)
  t.match(missing.body, { schemas: [ERROR_SCHEMA], status: '404' }, 'errors there are SCIM errors still')
  t.equal(missing.res.headers.deprecation, DEPRECATED, 'and dated too')
  const unknownPath = await scim('GET', '/scim/v2/Nothing')
  t.match(unknownPath.body, { schemas: [ERROR_SCHEMA], status: '404' }, 'a path neither base has: a SCIM error')
  const unknownNew = await scim('GET', '/api/scim/v2/Nothing')
  t.match(unknownNew.body, { schemas: [ERROR_SCHEMA], status: '404' })
})
