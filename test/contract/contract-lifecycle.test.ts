import t from 'tap'
import { loadContract } from '../../src/app.js'
import { build } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { assertContract } from '../helpers/contract.js'

// The contract's version and deprecations on the wire (docs/contract-versioning.md): the served
// contract, /api/health and every /api response's API-Version agree with openapi.yaml's
// info.version; an operation, parameter or body field marked deprecated (in a copy of the
// contract: no real operation is deprecated) answers with Deprecation, Sunset and Link, and
// each such call is counted by api_deprecated_calls_total.

type Json = Record<string, any>

const VERSION = String((loadContract().info as Json).version)

t.test('/api/openapi.json, /api/health and API-Version agree with info.version', async t => {
  t.match(VERSION, /^\d+\.\d+\.\d+$/, 'openapi.yaml has a MAJOR.MINOR.PATCH version')
  const h = await build(t)
  const served = await h.inject({ method: 'GET', url: '/api/openapi.json' })
  assertContract(t, 'GET', '/api/openapi.json', served)
  t.equal((served.json() as Json).info.version, VERSION, 'the served contract')
  t.equal(served.headers['api-version'], VERSION, 'its API-Version')

  const health = await h.inject({ method: 'GET', url: '/api/health' })
  assertContract(t, 'GET', '/api/health', health)
  t.equal((health.json() as Json).version, VERSION, '/api/health reports it')
  t.equal(health.headers['api-version'], VERSION, 'and its API-Version header')

  // On every /api answer, errors included; not on the HTML pages.
  const refused = await h.inject({ method: 'GET', url: '/api/users/me' })
  t.equal(refused.statusCode, 401)
  t.equal(refused.headers['api-version'], VERSION, 'a 401')
  const unknown = await h.inject({ method: 'GET', url: '/api/no-such-thing' })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.headers['api-version'], VERSION, 'a 404 of no operation')
  const page = await h.inject({ method: 'GET', url: '/login' })
  t.equal(page.headers['api-version'], undefined, 'not a page')
})

/** openapi.yaml with GET /api/invitations, /api/users' `limit` and the invite's `role` deprecated. */
function deprecatedCopy (): Json {
  const contract = loadContract() as Json
  Object.assign(contract.paths['/api/invitations'].get, {
    deprecated: true,
    'x-deprecated-at': '2026-11-01',
    'x-sunset': '2027-05-31',
    'x-deprecation-link': 'https://workspace.example.com/docs/contract-changelog.md'
  })
  const users = contract.paths['/api/users'].get
  users.parameters = users.parameters.map((p: Json) => p.$ref === '#/components/parameters/Limit'
    ? { ...contract.components.parameters.Limit, deprecated: true, 'x-deprecated-at': '2026-10-15' }
    : p)
  Object.assign(contract.components.schemas.InviteUserRequest.properties.role, {
    deprecated: true, 'x-deprecated-at': '2026-09-30', 'x-sunset': '2027-03-31'
  })
  return contract
}

interface Sample { labels: string, value: number }
async function deprecatedCalls (url: string): Promise<Sample[]> {
  const text = await (await fetch(url)).text()
  return [...text.matchAll(/^api_deprecated_calls_total\{(.*)\} (\S+)$/gm)]
    .map(m => ({ labels: m[1] ?? '', value: Number(m[2]) }))
}

t.test('deprecated in the contract: Deprecation, Sunset, Link on the calls that use it, counted', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { contract: deprecatedCopy(), env: { METRICS_PORT: '0', SMTP_URL: smtp.url } })
  const metrics = await h.app.listenMetrics() ?? ''
  t.same(await deprecatedCalls(metrics), [], 'nothing counted before a call')
  const admin = await h.signIn()

  const listed = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/invitations', listed)
  t.equal(listed.headers.deprecation, `@${Date.parse('2026-11-01') / 1000}`, 'Deprecation: RFC 9745 date')
  t.equal(listed.headers.deprecation, '@1793491200')
  t.equal(listed.headers.sunset, 'Mon, 31 May 2027 00:00:00 GMT', 'Sunset: an HTTP-date (RFC 8594)')
  t.equal(listed.headers.link, '<https://workspace.example.com/docs/contract-changelog.md>; rel="deprecation"')
  t.equal(listed.headers['api-version'], VERSION)
  // Refused calls are calls too: the client still uses what goes away.
  const anonymous = await h.inject({ method: 'GET', url: '/api/invitations' })
  t.equal(anonymous.statusCode, 401)
  t.equal(anonymous.headers.deprecation, '@1793491200', 'a refused call is told too')

  // A deprecated parameter: only the calls that send it; the link defaults to the reference.
  const withLimit = await h.inject({ method: 'GET', url: '/api/users?limit=5', headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', '/api/users?limit=5', withLimit)
  t.equal(withLimit.headers.deprecation, `@${Date.parse('2026-10-15') / 1000}`)
  t.equal(withLimit.headers.sunset, undefined, 'no x-sunset, no Sunset')
  t.equal(withLimit.headers.link, `<${h.config.publicUrl}/api/docs>; rel="deprecation"`)
  const withoutLimit = await h.inject({ method: 'GET', url: '/api/users', headers: { cookie: admin.cookie } })
  t.equal(withoutLimit.statusCode, 200)
  t.equal(withoutLimit.headers.deprecation, undefined, 'a call without the parameter: no header')

  // A deprecated body field (the validator takes the x- keywords in a schema).
  const invited = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { email: 'ada@example.com', role: 'member' }
  })
  assertContract(t, 'POST', '/api/users/invite', invited)
  t.equal(invited.statusCode, 200)
  t.equal(invited.headers.deprecation, `@${Date.parse('2026-09-30') / 1000}`)
  t.equal(invited.headers.sunset, 'Wed, 31 Mar 2027 00:00:00 GMT')

  // An operation with nothing deprecated answers with none of the three.
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
  t.equal(me.statusCode, 200)
  t.same([me.headers.deprecation, me.headers.sunset, me.headers.link], [undefined, undefined, undefined])

  t.same((await deprecatedCalls(metrics)).sort((a, b) => a.labels.localeCompare(b.labels)), [
    { labels: 'operation_id="getInvitations",use="operation"', value: 2 },
    { labels: 'operation_id="getUsers",use="query.limit"', value: 1 },
    { labels: 'operation_id="postUsersInvite",use="body.role"', value: 1 }
  ], 'api_deprecated_calls_total by operationId and use')

  // The served contract is the copy: the reference page shows what it deprecates.
  const served = await h.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal((served.json() as Json).paths['/api/invitations'].get.deprecated, true)
})

t.test('a deprecated operation without x-deprecated-at is refused at start', async t => {
  const contract = loadContract() as Json
  contract.paths['/api/invitations'].get.deprecated = true
  await t.rejects(build(t, { contract }), /GET \/api\/invitations: deprecated, so x-deprecated-at needs a date/)
})

t.test('a sunset less than six months after the deprecation is refused at start (and by the gate)', async t => {
  const contract = loadContract() as Json
  Object.assign(contract.paths['/api/invitations'].get, {
    deprecated: true, 'x-deprecated-at': '2026-12-01', 'x-sunset': '2027-05-31'
  })
  await t.rejects(
    build(t, { contract }),
    /GET \/api\/invitations: x-sunset 2027-05-31 is less than six months after x-deprecated-at 2026-12-01: set it to 2027-06-01 or later/
  )
  contract.paths['/api/invitations'].get['x-sunset'] = '2027-06-01'
  const h = await build(t, { contract })
  t.equal((await h.inject({ method: 'GET', url: '/api/health' })).statusCode, 200, 'six months to the day is enough')
})
