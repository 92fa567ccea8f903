import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { operations } from '../helpers/contract-examples.js'
import { ALL_SCOPES, createApiKey } from '../helpers/mcp.js'

// Three places where the service read the contract more loosely or more strictly than it says,
// each walked over every operation the contract lists:
//  - an optional request body may be left out (approve and deny answered 400 without one);
//  - an integer or number parameter is a number as written, not after trimming (" 10 " was 10);
//  - a path whose parameter is empty names no operation: 404, as any unknown path.

const ID = '0190c0de-0000-7000-8000-000000000001'
const withIds = (path: string) => path.replace(/\{[^}]+\}/g, ID)

t.test('an operation whose request body is optional takes a request without any', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const optional = operations().filter(op => op.requestBody !== undefined && op.requestBody.required !== true)
  t.ok(optional.length >= 2, optional.map(o => o.operationId).join(', '))
  for (const op of optional) {
    const res = await h.inject({ method: op.method, url: withIds(op.path), headers: { cookie: admin.cookie } })
    t.not(res.statusCode, 400, `${op.operationId} without a body: ${res.body}`)
    assertContract(t, op.method, withIds(op.path), res)
  }
})

t.test('a numeric query parameter with spaces around it is 400', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const numeric = operations().filter(op => op.method === 'GET').flatMap(op => op.parameters
    .filter(p => p.in === 'query' && ['integer', 'number'].includes((p.schema as { type?: string }).type ?? ''))
    .map(p => ({ op, name: p.name })))
  t.ok(numeric.length >= 3, `${numeric.length} numeric query parameters`)
  // The directory's operations take a key only (SCIM clients send a bearer token, no cookie).
  const key = await createApiKey(h, admin, 'every scope', ALL_SCOPES)
  for (const { op, name } of numeric) {
    const headers = /^\/(api\/)?scim\//.test(op.path) ? { authorization: `Bearer ${key.secret}` } : { cookie: admin.cookie }
    for (const value of [' 10', '10 ', '%2010%20', '1e1', '0x0A', '']) {
      const url = `${withIds(op.path)}?${name}=${value.replaceAll(' ', '%20')}`
      const res = await h.inject({ method: 'GET', url, headers })
      t.equal(res.statusCode, 400, `${op.operationId} ${name}=${JSON.stringify(value)}: ${res.body}`)
      assertContract(t, 'GET', url, res)
    }
    const plain = await h.inject({ method: 'GET', url: `${withIds(op.path)}?${name}=10`, headers })
    t.not(plain.statusCode, 400, `${op.operationId} ${name}=10 is a number: ${plain.body}`)
  }
})

t.test('an empty path parameter is 404, as any path the contract does not list', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  for (const op of operations().filter(o => o.path.includes('{'))) {
    const names = [...op.path.matchAll(/\{([^}]+)\}/g)].map(m => m[1] as string)
    for (const empty of names) {
      const url = op.path.replace(/\{([^}]+)\}/g, (_m, name: string) => name === empty ? '' : ID)
      const res = await h.inject({
        method: op.method, url, headers: { cookie: admin.cookie, 'content-type': 'application/json' }, payload: '{}'
      })
      t.equal(res.statusCode, 404, `${op.method} ${url}: ${res.body}`)
      // Under /scim/v2 a 404 is a SCIM error object (RFC 7644 §3.12), elsewhere NOT_FOUND.
      if (/^\/(api\/)?scim\//.test(url)) t.match(res.json(), { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404' })
      else t.equal(res.json().code, 'NOT_FOUND')
    }
  }
})
