import t from 'tap'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { examplesOf, operations, parameterExample, type Operation } from '../helpers/contract-examples.js'
import { ALL_SCOPES, createApiKey } from '../helpers/mcp.js'

// API keys on the whole contract, every case derived from openapi.yaml: each operation open to
// keys names its scopes on its `apiKey` requirement; a key holding every scope but one of them is
// refused (403 INSUFFICIENT_SCOPE with the RFC 6750 §3.1 challenge), a key holding exactly them
// gets past authentication. Every other secured operation says `x-api-key: never` and refuses any
// key (403 API_KEY_NOT_ALLOWED), whatever its scopes.

const ops = operations()
const keyScopes = (op: Operation): string[] | undefined => op.security.find(r => 'apiKey' in r)?.apiKey
// The MCP endpoint takes any key: each tool checks the scopes of the operation it wraps (mcp tests).
const openToKeys = ops.filter(op => keyScopes(op) !== undefined && op.operationId !== 'postMcp')
const never = ops.filter(op => op.apiKey === 'never')

/** A request for `op` built from the contract's examples: path parameters, required query, the first body. */
function requestFor (op: Operation, headers: Record<string, string>) {
  let url = op.path
  for (const p of op.parameters.filter(p => p.in === 'path')) {
    url = url.replace(`{${p.name}}`, encodeURIComponent(String(parameterExample(p))))
  }
  const query = op.parameters.filter(p => p.in === 'query' && p.required === true)
    .map(p => `${p.name}=${encodeURIComponent(String(parameterExample(p)))}`)
  if (query.length > 0) url += `?${query.join('&')}`
  const json = op.requestBody?.content['application/json']
  const body = json === undefined ? undefined : examplesOf(json as never)[0]?.value
  return {
    method: op.method as 'GET',
    url,
    headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {})
  }
}

let h: TestApp
let admin: SignedIn
t.before(async () => {
  h = await build(t, { env: { API_KEYS_PER_WORKSPACE: '1000' } })
  admin = await h.signIn({ role: 'admin' })
})

t.test('the contract: every secured operation is open to keys with scopes, or says x-api-key: never', async t => {
  t.ok(openToKeys.length >= 25, `${openToKeys.length} REST operations open to API keys (at least 25)`)
  for (const op of ops) {
    const secured = op.security.length > 0 && op.security.every(r => Object.keys(r).length > 0)
    const scopes = keyScopes(op)
    if (op.apiKey === 'never') t.equal(scopes, undefined, `${op.operationId}: never, and no apiKey requirement`)
    else if (secured) t.ok(scopes !== undefined, `${op.operationId}: secured, so open to keys or x-api-key: never`)
    for (const s of scopes ?? []) t.ok(ALL_SCOPES.includes(s), `${op.operationId}: ${s} is in the catalogue`)
    if (op.apiKeyAdminScope !== undefined) t.ok(ALL_SCOPES.includes(op.apiKeyAdminScope), `${op.operationId}: admin scope`)
    if (scopes !== undefined && op.operationId !== 'postMcp') {
      t.ok(scopes.length > 0, `${op.operationId}: names at least one scope`)
      t.ok(op.responses['403'] !== undefined && op.responses['429'] !== undefined, `${op.operationId}: declares 403 and 429`)
    }
  }
  // Every scope of the catalogue is needed by some operation: none is a name without a use.
  const used = new Set([...openToKeys.flatMap(op => keyScopes(op) ?? []), ...ops.map(op => op.apiKeyAdminScope)])
  t.same(ALL_SCOPES.filter(s => !used.has(s)), [], 'every scope of the catalogue opens something')
})

for (const op of openToKeys) {
  const scopes = keyScopes(op) ?? []
  t.test(`${op.method} ${op.path} (${op.operationId}) needs ${scopes.join(' + ')}`, async t => {
    for (const scope of scopes) {
      const others = ALL_SCOPES.filter(s => s !== scope)
      const key = await createApiKey(h, admin, `all but ${scope}`, others)
      const req = requestFor(op, { authorization: `Bearer ${key.secret}` })
      const res = await h.inject(req)
      t.equal(res.statusCode, 403, `a key with every scope but ${scope} is refused`)
      if (/^\/(api\/)?scim\/v2\//.test(op.path)) {
        // Under /scim/v2 every error is a SCIM error object (RFC 7644 §3.12); the challenge names the scope.
        t.match(res.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '403' }, 'a SCIM error')
      } else {
        t.equal(res.json().code, 'INSUFFICIENT_SCOPE')
        t.same(res.json().details?.missingScopes, [scope], 'details name what is missing')
      }
      t.equal(
        res.headers['www-authenticate'],
        `Bearer realm="workspace-service", error="insufficient_scope", scope="${scope}"`,
        'the RFC 6750 challenge names the missing scope'
      )
      assertContract(t, op.method, req.url, res)
    }
    const own = await createApiKey(h, admin, `just ${scopes.join(' ')}`, scopes)
    const req = requestFor(op, { authorization: `Bearer ${own.secret}` })
    const res = await h.inject(req)
    t.not(res.statusCode, 401, `a key with ${scopes.join(' + ')} is authenticated`)
    if (res.statusCode === 403) t.not(res.json().code, 'INSUFFICIENT_SCOPE', 'and holds what the operation needs')
    assertContract(t, op.method, req.url, res)
  })
}

t.test('operations marked x-api-key: never refuse any key, whatever its scopes', async t => {
  const key = await createApiKey(h, admin, 'every scope', ALL_SCOPES)
  for (const op of never) {
    const req = requestFor(op, { authorization: `Bearer ${key.secret}`, cookie: admin.cookie })
    const res = await h.inject(req)
    t.equal(res.statusCode, 403, `${op.operationId}: 403`)
    t.equal(res.json().code, 'API_KEY_NOT_ALLOWED', `${op.operationId}: API_KEY_NOT_ALLOWED`)
    assertContract(t, op.method, req.url, res)
  }
  t.ok(never.some(op => op.operationId === 'postApiKeys'), 'a key cannot make a key')
})
