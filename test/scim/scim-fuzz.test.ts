import t from 'tap'
import fc from 'fast-check'
import { isScimError, scimFixture } from '../helpers/scim.js'

// A fuzz over /api/scim/v2 with what directories send: filters built from SCIM's grammar and broken
// ones, PATCH operations with and without paths, in any case, with value filters and odd values,
// User and Group bodies. Every answer must conform to openapi.yaml, never be a 5xx, and every
// error must be a SCIM error object. Seeded (FUZZ_SEED) and bounded (SCIM_FUZZ_RUNS).

const SEED = Number(process.env.FUZZ_SEED ?? 20261127)
const RUNS = Number(process.env.SCIM_FUZZ_RUNS ?? 150)

const attr = fc.constantFrom(
  'userName', 'externalId', 'emails.value', 'emails.type', 'active', 'displayName', 'name.givenName', 'id', 'meta.created',
  'nickName', 'urn:ietf:params:scim:schemas:core:2.0:User:userName', 'members.value', 'members', 'emails'
)
const value = fc.oneof(
  fc.string({ maxLength: 12 }).map(s => JSON.stringify(s)), fc.constantFrom('true', 'false', 'null', '42', '"x@example.com"')
)
const compare = fc.tuple(attr, fc.constantFrom('eq', 'ne', 'co', 'sw', 'ew', 'gt', 'le', 'pr', 'EQ', 'xx'), value)
  .map(([a, op, v]) => op === 'pr' ? `${a} pr` : `${a} ${op} ${v}`)
const filter: fc.Arbitrary<string> = fc.letrec(tie => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    compare,
    fc.tuple(tie('f') as fc.Arbitrary<string>, fc.constantFrom('and', 'or'), tie('f') as fc.Arbitrary<string>)
      .map(([a, op, b]) => `${a} ${op} ${b}`),
    (tie('f') as fc.Arbitrary<string>).map(f => `not (${f})`),
    compare.map(c => `emails[${c}]`),
    fc.string({ maxLength: 30 })
  )
})).f as fc.Arbitrary<string>

const path = fc.oneof(
  fc.constantFrom(
    'active', 'userName', 'externalId', 'displayName', 'name.givenName', 'name.familyName', 'emails',
    'emails[type eq "work"].value', 'emails[type eq "work"].primary', 'phoneNumbers[type eq "work"].value', 'id',
    'members', 'members[value eq "3f0c1d52-7d0e-4d8b-9a57-2b0b0e4a0c11"]', 'emails[type eq', 'meta.created',
    'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department'
  ),
  fc.string({ minLength: 1, maxLength: 20 })
)
const anyValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }), fc.constantFrom('True', 'False', true, false),
  fc.dictionary(fc.constantFrom('active', 'name.givenName', 'displayName', 'userName', 'id'), fc.jsonValue({ maxDepth: 1 })),
  fc.array(fc.record({ value: fc.oneof(fc.uuid(), fc.string({ maxLength: 10 })) }), { maxLength: 3 })
)
const operation = fc.record({
  op: fc.constantFrom('add', 'remove', 'replace', 'Add', 'Remove', 'Replace'),
  path: fc.option(path, { nil: undefined }),
  value: fc.option(anyValue, { nil: undefined })
}).map(o => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)))

t.test(`a fuzz over /api/scim/v2 finds only SCIM error objects (FUZZ_SEED=${SEED})`, async t => {
  const { scim } = await scimFixture(t, { env: { API_KEY_SCIM_RATE_LIMIT_PER_MINUTE: '1000000' } })
  const user = await scim('POST', '/api/scim/v2/Users', {
    schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'fuzz-target@example.com', active: true
  })
  const group = await scim('POST', '/api/scim/v2/Groups', { schemas: [], displayName: 'Fuzz', members: [{ value: user.body.id }] })
  const ids = { user: user.body.id as string, group: group.body.id as string }
  const request = fc.oneof(
    filter.map(f => ({ method: 'GET', url: `/api/scim/v2/Users?filter=${encodeURIComponent(f)}` })),
    filter.map(f => ({ method: 'GET', url: `/api/scim/v2/Groups?filter=${encodeURIComponent(f)}&excludedAttributes=members` })),
    fc.array(operation, { minLength: 1, maxLength: 4 }).map(ops => ({
      method: 'PATCH', url: `/api/scim/v2/Users/${ids.user}`, body: { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: ops }
    })),
    fc.array(operation, { minLength: 1, maxLength: 4 }).map(ops => ({
      method: 'PATCH', url: `/api/scim/v2/Groups/${ids.group}`, body: { schemas: [], Operations: ops }
    })),
    fc.record({
      userName: fc.oneof(fc.emailAddress(), fc.string({ maxLength: 20 })),
      emails: fc.option(fc.array(fc.record({ value: fc.string({ maxLength: 20 }), primary: fc.constantFrom(true, 'True', 'no') }), { maxLength: 2 }), { nil: undefined }),
      active: fc.option(fc.constantFrom(true, false, 'True', 'False', 'maybe'), { nil: undefined })
    }).map(b => ({ method: 'POST', url: '/api/scim/v2/Users', body: { schemas: [], ...JSON.parse(JSON.stringify(b)) } })),
    fc.tuple(fc.constantFrom('attributes', 'excludedAttributes', 'startIndex', 'count'), fc.string({ maxLength: 12 }))
      .map(([k, v]) => ({ method: 'GET', url: `/api/scim/v2/Users?${k}=${encodeURIComponent(v)}` }))
  )
  let n = 0
  const statuses = new Map<number, number>()
  await fc.assert(fc.asyncProperty(request, async r => {
    n++
    const res = await scim(r.method, r.url, (r as { body?: unknown }).body)
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    const where = `${r.method} ${r.url} ${JSON.stringify((r as { body?: unknown }).body ?? '')} → ${res.status} ${res.res.body.slice(0, 300)}`
    if (res.status >= 500) throw new Error(`a 5xx: ${where}`)
    if (res.problems.length > 0) throw new Error(`${res.problems.join('; ')}: ${where}`)
    if (res.status >= 400 && !isScimError(res.body, res.status)) throw new Error(`not a SCIM error: ${where}`)
  }), { seed: SEED, numRuns: RUNS })
  t.comment(`scim fuzz: ${n} requests, statuses ${[...statuses].map(([s, c]) => `${s}×${c}`).join(' ')}`)
  t.ok(n >= RUNS)
})
