import t from 'tap'
import { readFileSync } from 'node:fs'
import { Errors } from '../../src/errors.js'
import { loadContract } from '../../src/app.js'
import { createHandlers } from '../../handlers/index.js'
import { compileAllSchemas } from '../../src/validation.js'
import { build } from '../helpers/build.js'
import { deref, operations } from '../helpers/contract.js'

const contract = loadContract() as {
  components: { schemas: { ErrorCode: { enum: string[] } } },
  info: { version: string }
}

t.test('every schema of every route compiles (they compile on first use; here all at once)', async t => {
  const h = await build(t)
  const compiled = compileAllSchemas()
  t.ok(compiled > 50, `${compiled} distinct validators and serializers compiled`)
  t.equal(compileAllSchemas(), 0, 'none is left to compile')
  const res = await h.inject({ url: '/api/health' })
  t.equal(res.statusCode, 200, 'and the app answers with them')
})

t.test('error registry and contract list the same codes, each once', async t => {
  const registry = Object.keys(Errors)
  const declared = contract.components.schemas.ErrorCode.enum
  t.equal(new Set(declared).size, declared.length, 'no code listed twice in ErrorCode')
  t.same([...registry].sort(), [...declared].sort(), 'registry codes = ErrorCode enum')
  for (const [code, Ctor] of Object.entries(Errors)) {
    const err = new (Ctor as unknown as new (...a: string[]) => Error & { code: string, statusCode: number })('x', 'y')
    t.equal(err.code, code)
    t.match(code, /^[A-Z][A-Z_]+$/, `${code} is upper-case`)
    t.ok(err.statusCode >= 400 && err.statusCode < 600, `${code} has an error status`)
  }
})

t.test('every error response of every operation is an ErrorResponse', async t => {
  for (const { method, path, op } of operations()) {
    for (const [status, response] of Object.entries(op.responses)) {
      if (Number(status) < 400 || path === '/api/health') continue
      const resolved = deref(response)
      // Under /scim/v2, a SCIM error (RFC 7644 §3.12) in SCIM's media type; everywhere else an ErrorResponse.
      const scim = /^\/(api\/)?scim\/v2\//.test(path)
      const schema = resolved?.content?.[scim ? 'application/scim+json' : 'application/json']?.schema as { $ref?: string } | undefined
      t.equal(schema?.$ref, `#/components/schemas/${scim ? 'ScimError' : 'ErrorResponse'}`, `${method} ${path} ${status}`)
    }
  }
})

t.test('every operationId has a handler and every handler an operationId', async t => {
  const h = await build(t)
  const handlers = createHandlers({ services: h.app.services, config: h.config, contract: h.app.contract })
  const ids = operations().map(o => o.op.operationId).sort()
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  t.same(Object.keys(handlers).sort(), ids)
  for (const [id, fn] of Object.entries(handlers)) t.type(fn, 'function', id)
})

t.test('the contract is served as JSON and the reference page reads it', async t => {
  const h = await build(t)
  const res = await h.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(res.statusCode, 200)
  t.same(res.json(), loadContract())
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  t.equal(res.json().info.version, pkg.version, 'the served contract and the package have one version')
  const docs = await h.inject({ method: 'GET', url: '/api/docs' })
  t.equal(docs.statusCode, 200)
  t.match(docs.headers['content-type'], /^text\/html/)
  t.match(docs.body, /\/api\/openapi\.json/)
})

t.test("the reference page's Test Request goes to this service, with the browser's session", async t => {
  // The contract's first server is http://localhost:3000: on any other address the button sent
  // there, cross-origin (refused by the page's connect-src 'self', and without the cookie).
  // Checked in Chromium with a signed-in session: GET /api/users/me answered 200 on port 3918.
  const h = await build(t, { env: { PUBLIC_URL: 'https://workspace.example.org' } })
  const docs = await h.inject({ method: 'GET', url: '/api/docs' })
  const attr = /data-configuration='([^']*)'/.exec(docs.body)?.[1] ?? ''
  const configuration = JSON.parse(attr.replace(/&#39;/g, "'").replace(/&amp;/g, '&')) as { servers?: Array<{ url: string }> }
  t.same(configuration.servers?.map(s => s.url), ['https://workspace.example.org'], 'the one server is PUBLIC_URL')
  t.match(docs.headers['content-security-policy'], /connect-src 'self'/, 'and requests stay same-origin')
})
