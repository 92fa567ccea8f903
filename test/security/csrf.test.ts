import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { operations } from '../helpers/contract-examples.js'
import { loadContract } from '../../src/app.js'

// The one CSRF check (src/plugins/cross-origin.ts), operation by operation as the contract lists
// them: every unsafe method the session cookie can authorize, and every public one (they set or
// clear that cookie), refuses what a browser marks as coming from another origin, with 403
// CSRF_REJECTED declared by that operation; API-key and Slack-signed operations do not look.
// test/csrf-browser.test.ts shows the same with a real browser on a second origin.

const PUBLIC_URL = 'http://127.0.0.1:3999'
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const ID = '0190c0de-0000-7000-8000-000000000001'

// Public operations another site's page posts by design (`crossSitePost`: SAML's ACS) are not checked.
const raw = loadContract() as { paths: Record<string, Record<string, { 'x-fastify-config'?: { crossSitePost?: boolean } }>> }
const crossSite = (op: { method: string, path: string }): boolean =>
  raw.paths[op.path]?.[op.method.toLowerCase()]?.['x-fastify-config']?.crossSitePost === true
const unsafeOps = operations().filter(op => UNSAFE.has(op.method))
const crossSiteOps = unsafeOps.filter(crossSite)
const browserOps = unsafeOps.filter(op => !crossSite(op) &&
  (op.security.length === 0 || op.security.some(r => Object.keys(r).length === 0 || 'sessionCookie' in r)))
const otherOps = unsafeOps.filter(op => !browserOps.includes(op) && !crossSite(op))
const codeOf = (body: string): unknown => body === '' ? undefined : (JSON.parse(body) as { code?: unknown } | null)?.code

const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, ID)

t.test('the contract names which unsafe operations are checked', async t => {
  t.ok(browserOps.length >= 20, `${browserOps.length} cookie or public operations`)
  t.same(otherOps.map(o => o.operationId).sort(), [
    'deleteScimGroup', 'deleteScimUser', 'patchScimGroup', 'patchScimUser', 'postMcp', 'postScimGroups', 'postScimUsers',
    'postSlackCommands', 'postSlackEvents', 'postSlackInteractions', 'putScimGroup', 'putScimUser',
    // SCIM at /api/scim/v2 (contract 2.1); the names above are the same operations at the deprecated /scim/v2.
    'scimCreateGroup', 'scimCreateUser', 'scimDeleteGroup', 'scimDeleteUser', 'scimPatchGroup', 'scimPatchUser',
    'scimReplaceGroup', 'scimReplaceUser'
  ], 'only API-key (MCP, the directory\'s SCIM) and Slack-signed operations are exempt')
})

t.test('only SAML\'s ACS takes a post from another site: public, it acts on no session cookie', async t => {
  t.same(crossSiteOps.map(o => o.operationId), ['postSsoConnectionsConnectionIdSamlAcs'])
  t.ok(crossSiteOps.every(o => o.security.length === 0 || o.security.every(r => Object.keys(r).length === 0)))
  const h = await build(t, { env: { PUBLIC_URL } })
  const res = await h.inject({
    method: 'POST',
    url: urlOf('/api/sso/connections/{connectionId}/saml/acs'),
    headers: { 'sec-fetch-site': 'cross-site', origin: 'https://idp.example', 'content-type': 'application/x-www-form-urlencoded' },
    payload: 'SAMLResponse=PHNhbWxwOlJlc3BvbnNlLz4%3D'
  })
  t.equal(res.statusCode, 404, 'not CSRF_REJECTED: the connection is looked up')
})

t.test('every checked operation refuses another origin with 403 CSRF_REJECTED, before anything else', async t => {
  const h = await build(t, { env: { PUBLIC_URL } })
  const admin = await h.signIn({ role: 'admin' })
  const refusals: Array<[string, Record<string, string>]> = [
    ['Sec-Fetch-Site: same-site', { 'sec-fetch-site': 'same-site' }],
    ['Sec-Fetch-Site: cross-site', { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }],
    ['Origin of another port, no Sec-Fetch-Site', { origin: 'http://127.0.0.1:4000' }],
    ['Origin: null', { origin: 'null' }]
  ]
  for (const op of browserOps) {
    for (const [why, headers] of refusals) {
      const res = await h.inject({
        method: op.method,
        url: urlOf(op.path),
        headers: { cookie: admin.cookie, ...headers },
        payload: { anything: true }
      })
      t.equal(res.statusCode, 403, `${op.operationId}, ${why}: ${res.body}`)
      t.equal(res.json().code, 'CSRF_REJECTED')
      assertContract(t, op.method, urlOf(op.path), res)
    }
  }
})

t.test('same-origin, user-initiated and header-less requests pass the check', async t => {
  const h = await build(t, { env: { PUBLIC_URL } })
  const admin = await h.signIn({ role: 'admin' })
  const passes: Array<[string, Record<string, string>]> = [
    ['Sec-Fetch-Site: same-origin', { 'sec-fetch-site': 'same-origin', origin: PUBLIC_URL }],
    // Sec-Fetch-Site decides when present: a same-origin request reached under another name
    // (localhost for 127.0.0.1) is still the page's own.
    [
      'Sec-Fetch-Site: same-origin, another Origin',
      { 'sec-fetch-site': 'same-origin', origin: 'http://localhost:3999' }
    ],
    ['Sec-Fetch-Site: none', { 'sec-fetch-site': 'none' }],
    ['Origin: PUBLIC_URL, no Sec-Fetch-Site', { origin: PUBLIC_URL }],
    ['neither header (curl, a server)', {}]
  ]
  for (const op of browserOps) {
    for (const [why, headers] of passes) {
      const res = await h.inject({
        method: op.method, url: urlOf(op.path), headers: { cookie: admin.cookie, ...headers }
      })
      t.not(codeOf(res.body), 'CSRF_REJECTED', `${op.operationId}, ${why}: ${res.statusCode}`)
    }
  }
})

t.test('a same-origin sign-out goes through to the end: the session row is revoked', async t => {
  const h = await build(t, { env: { PUBLIC_URL } })
  const admin = await h.signIn({ role: 'admin' })
  const out = await h.inject({
    method: 'POST', url: '/api/auth/logout', headers: { cookie: admin.cookie, 'sec-fetch-site': 'same-origin' }
  })
  t.equal(out.statusCode, 204, out.body)
  const me = await h.inject({ method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie } })
  t.equal(me.statusCode, 401, 'the session row is revoked')
})

t.test('API-key and Slack-signed operations do not look at the browser headers', async t => {
  const h = await build(t, { env: { PUBLIC_URL } })
  for (const op of otherOps) {
    const res = await h.inject({
      method: op.method,
      url: urlOf(op.path),
      headers: { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      payload: {}
    })
    t.not(codeOf(res.body), 'CSRF_REJECTED', `${op.operationId}: ${res.statusCode}`)
    t.not(res.statusCode, 403, `${op.operationId}: ${res.body}`)
  }
})

t.test('safe methods are never checked', async t => {
  const h = await build(t, { env: { PUBLIC_URL } })
  const admin = await h.signIn({ role: 'admin' })
  const res = await h.inject({
    method: 'GET', url: '/api/users/me', headers: { cookie: admin.cookie, 'sec-fetch-site': 'cross-site' }
  })
  t.equal(res.statusCode, 200)
})
