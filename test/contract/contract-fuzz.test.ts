import t from 'tap'
import fc from 'fast-check'
import { createHmac, randomBytes } from 'node:crypto'
import type { InjectOptions } from 'fastify'
import { loadContract } from '../../src/app.js'
import { build } from '../helpers/build.js'
import { contractProblems, deref, METHODS } from '../helpers/contract.js'
import { ALL_SCOPES } from '../helpers/mcp.js'

// Contract fuzzing: requests generated from openapi.yaml (valid and broken bodies, wrong types,
// missing and extra fields, wrong content types, forged and garbage session cookies, odd path
// and query values) sent through inject to every operation, anonymous and as a signed-in admin.
// Every answer must be a status the contract declares for that operation, with a body matching
// its schema, and never a 5xx. Seeded (FUZZ_SEED), bounded in runs (FUZZ_RUNS per operation and
// caller) and in time (FUZZ_TIME_MS overall), so a failure is reproducible and CI stays fast.

const SEED = Number(process.env.FUZZ_SEED ?? 20250608)
const RUNS = Number(process.env.FUZZ_RUNS ?? 50)
const TIME_MS = Number(process.env.FUZZ_TIME_MS ?? 15_000)
// Every operation and caller gets at least this long, even on a loaded machine.
const MIN_SHARE_MS = 250

type Schema = Record<string, unknown>
interface Param { name: string, in: 'path' | 'query' | 'header' | 'cookie', required?: boolean, schema?: Schema }
interface Op {
  operationId: string
  parameters?: Array<Param | { $ref: string }>
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  security?: Array<Record<string, string[]>>
}

const contract = loadContract() as { paths: Record<string, Record<string, unknown>> }

interface Target { method: string, path: string, op: Op, params: Param[], bodySchema: Schema | null }

function targets (): Target[] {
  const out: Target[] = []
  for (const [path, item] of Object.entries(contract.paths)) {
    const shared = (item.parameters as Param[] | undefined) ?? []
    for (const method of METHODS) {
      const op = item[method] as Op | undefined
      if (op === undefined) continue
      const params = [...shared, ...(op.parameters ?? [])].map(p => deref<Param>(p))
      const body = op.requestBody?.content?.['application/json']?.schema
      out.push({
        method: method.toUpperCase(),
        path,
        op,
        params,
        bodySchema: body !== undefined ? deref<Schema>(body) : null
      })
    }
  }
  return out
}

// ---------------------------------------------------------------- values from schemas

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map(c => String.fromCharCode(c)),
  maxLength: 40
})
const anyText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  printable,
  fc.constantFrom(
    '', ' ', '0', '-1', 'null', 'true', '%00', '..%2f', '\u0000', '💥', 'a'.repeat(300), '<script>', "' OR 1=1 --"
  )
)

/** An arbitrary producing values valid under the schema (as far as the keywords used go). */
function valid (schema: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = deref<Schema>(schema)
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]))
  if ('const' in s) return fc.constant(s.const)
  if (Array.isArray(s.oneOf)) return fc.oneof(...(s.oneOf as Schema[]).map(x => valid(x, depth + 1)))
  if (Array.isArray(s.anyOf)) return fc.oneof(...(s.anyOf as Schema[]).map(x => valid(x, depth + 1)))
  const type = Array.isArray(s.type) ? s.type as string[] : [s.type as string | undefined]
  if (type.length > 1) return fc.oneof(...type.map(ty => valid({ ...s, type: ty }, depth + 1)))
  switch (type[0]) {
    case 'string': {
      const maxLength = Math.min(Number(s.maxLength ?? 60), 80)
      const minLength = Number(s.minLength ?? 0)
      switch (s.format) {
        case 'email': return fc.oneof(
          fc.emailAddress().filter(e => e.length <= maxLength), fc.uuid().map(u => `fuzz-${u.slice(0, 8)}@example.com`)
        )
        case 'uuid': return fc.uuid()
        case 'date-time': return fc.date({ noInvalidDate: true }).map(d => d.toISOString())
        case 'uri': return fc.webUrl()
      }
      return fc.string({ minLength, maxLength: Math.max(minLength, maxLength) })
    }
    case 'integer': return fc.integer({ min: Number(s.minimum ?? -1000), max: Number(s.maximum ?? 1000) })
    case 'number': return fc.double({ noNaN: true, noDefaultInfinity: true })
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    case 'array': return fc.array(
      valid((s.items as Schema | undefined) ?? {}, depth + 1), { maxLength: depth > 2 ? 0 : 3 }
    )
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>
      const required = (s.required ?? []) as string[]
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const [k, v] of Object.entries(props)) model[k] = valid(v, depth + 1)
      const rec = fc.record(model, { requiredKeys: required.filter(k => k in props) })
      if (s.additionalProperties === true && depth < 2) {
        return fc.tuple(
          rec, fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 })
        )
          .map(([a, b]) => ({ ...b, ...a }))
      }
      return rec
    }
  }
  return fc.jsonValue({ maxDepth: 2 })
}

/** A value of the wrong JSON type for the schema. */
function wrongType (schema: Schema): fc.Arbitrary<unknown> {
  const s = deref<Schema>(schema)
  const types = new Set(Array.isArray(s.type) ? s.type as string[] : [s.type as string])
  const all: Array<[string, fc.Arbitrary<unknown>]> = [
    ['string', fc.string({ maxLength: 10 })], ['number', fc.double({ noNaN: true })], ['integer', fc.integer()],
    [
      'boolean', fc.boolean()
    ], ['null', fc.constant(null)], ['array', fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 })],
    ['object', fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 })]
  ]
  const wrong = all.filter(([ty]) => !types.has(ty) && !(ty === 'integer' && types.has('number')) && !(ty === 'number' && types.has('integer')))
  return fc.oneof(...wrong.map(([, a]) => a))
}

/** Bodies: valid, missing a required field, an extra field, a field of the wrong type, any JSON. */
function bodyValue (schema: Schema): fc.Arbitrary<unknown> {
  const s = deref<Schema>(schema)
  const props = (s.properties ?? {}) as Record<string, Schema>
  const required = (s.required ?? []) as string[]
  // Valid bodies weigh most, so handlers are reached; each kind of breakage gets a share.
  const variants: Array<fc.Arbitrary<unknown>> = [valid(s), valid(s), valid(s), fc.jsonValue({ maxDepth: 3 })]
  if (s.type === 'object') {
    const base = valid(s).filter((v): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v))
    if (required.length > 0) {
      variants.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([v, k]) => { const c = { ...v }; delete c[k]; return c })
      )
    }
    variants.push(
      fc.tuple(
        base, fc.string({ minLength: 1, maxLength: 12 }), fc.jsonValue({ maxDepth: 1 })
      ).map(([v, k, x]) => ({ ...v, [k]: x }))
    )
    if (Object.keys(props).length > 0) {
      variants.push(
        fc.tuple(
          base, fc.constantFrom(...Object.keys(props))
        ).chain(([v, k]) => wrongType(props[k] as Schema).map(x => ({ ...v, [k]: x })))
      )
    }
  }
  return fc.oneof(...variants)
}

// ---------------------------------------------------------------- requests

interface Fixtures {
  secret: string
  publicUrl: string
  adminCookie: string
  memberCookie: string
  apiKey: string
  /** Ids that exist (a member, an invitation, an API key), so handlers get past "not found". */
  knownIds: string[]
}

const b64url = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')
function jwt (header: unknown, payload: unknown, secret: string, alg: 'sha256' | 'sha512' = 'sha256'): string {
  const head = `${b64url(header)}.${b64url(payload)}`
  return `${head}.${createHmac(alg, secret).update(head).digest('base64url')}`
}

/** service_session values: garbage, forged, expired, foreign, tampered and (for admin) valid. */
function sessionValue (f: Fixtures, valid: string | null): fc.Arbitrary<string | null> {
  const now = Math.floor(Date.now() / 1000)
  const claims = (
    over: Record<string, unknown>
  ) => ({
    sid: '6f1c8a52-7d0e-4d8b-9a57-2b0b0e4a0c11',
    iss: f.publicUrl,
    aud: 'workspace-service',
    iat: now,
    exp: now + 3600,
    ...over
  })
  const forged = fc.oneof(
    fc.constant(jwt({ alg: 'HS256', typ: 'JWT' }, claims({}), f.secret)), // right key, no such session
    fc.jsonValue({ maxDepth: 1 }).map(sid => jwt(
      { alg: 'HS256', typ: 'JWT' }, claims({ sid }), f.secret
    )), // odd sid types
    fc.constant(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ exp: now - 60 }), f.secret)), // expired
    fc.constant(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ aud: 'someone-else' }), f.secret)),
    fc.constant(jwt({ alg: 'HS256', typ: 'JWT' }, claims({ iss: 'https://evil.example' }), f.secret)),
    fc.constant(jwt({ alg: 'HS512', typ: 'JWT' }, claims({}), f.secret, 'sha512')),
    fc.constant(`${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(claims({}))}.`),
    fc.constant(jwt({ alg: 'HS256', typ: 'JWT' }, claims({}), randomBytes(32).toString('hex'))), // foreign key
    fc.jsonValue({ maxDepth: 2 }).map(p => jwt({ alg: 'HS256' }, p, f.secret)) // payload of any shape
  )
  const garbage = fc.oneof(
    printable.filter(s => !/[;,]/.test(s)),
    fc.constantFrom('', '%', '%E0%A4%A', '%00', 'a.b.c', '...', 'eyJ.eyJ.sig', '"quoted"', 'x'.repeat(4000)),
    fc.base64String({ maxLength: 200 })
  )
  const options: Array<fc.Arbitrary<string | null>> = [fc.constant(null), forged, garbage]
  if (valid !== null) {
    // Tampered: the admin's token with one character of its payload or signature changed.
    options.push(
      fc.nat({
        max: valid.length - 1
      }).map(i => valid.slice(0, i) + (valid[i] === 'A' ? 'B' : 'A') + valid.slice(i + 1))
    )
  }
  return fc.oneof(...options)
}

function cookieHeader (f: Fixtures, valid: string | null): fc.Arbitrary<string | undefined> {
  const odd = fc.tuple(sessionValue(f, null), fc.constantFrom('plain', 'dup', 'other', 'spaces')).map(([v, shape]) => {
    if (v === null) return shape === 'other' ? 'theme=dark; service_sessionx=1' : undefined
    switch (shape) {
      case 'dup': return `service_session=${v}; service_session=garbage`
      case 'other': return `a=1; service_session=${v}; b=%zz`
      case 'spaces': return `  service_session = ${v} `
      default: return `service_session=${v}`
    }
  })
  if (valid === null) return odd
  // Signed in: mostly the valid cookie (so handlers are reached), sometimes tampered or odd.
  return fc.oneof(
    {
      weight: 7,
      arbitrary: fc.constantFrom(`service_session=${valid}`, `theme=dark; service_session=${valid}; x=%zz`)
    },
    { weight: 1, arbitrary: sessionValue(f, valid).map(v => v === null ? undefined : `service_session=${v}`) },
    { weight: 2, arbitrary: odd }
  )
}

function pathValue (f: Fixtures): fc.Arbitrary<string> {
  return fc.oneof(
    fc.uuid(), fc.constantFrom(...f.knownIds), fc.constantFrom(...f.knownIds).map(s => s.toUpperCase()),
    anyText.filter(s => s !== '' && s !== '.' && s !== '..'),
    fc.string({ minLength: 190, maxLength: 260, unit: fc.constantFrom('a', 'b', '0', '-') })
  )
}

function queryValue (p: Param): fc.Arbitrary<string | string[] | undefined> {
  const schema = p.schema ?? {}
  return fc.oneof(
    fc.constant(undefined),
    valid(schema).map(v => String(v)),
    anyText,
    fc.array(valid(schema).map(v => String(v)), { minLength: 2, maxLength: 3 }),
    fc.constantFrom('1e3', '0x10', '-0', '1.5', '101', '0', 'NaN')
  )
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json; charset=latin1',
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/html', 'application/xml', 'application/vnd.api+json', '']

interface Req { opts: InjectOptions, summary: string }

function request (tg: Target, f: Fixtures, caller: 'anonymous' | 'admin'): fc.Arbitrary<Req> {
  const validCookie = caller === 'admin' ? f.adminCookie.replace(/^service_session=/, '') : null
  const pathParams = tg.params.filter(p => p.in === 'path')
  const queryParams = tg.params.filter(p => p.in === 'query')
  const headerParams = tg.params.filter(p => p.in === 'header')
  const hasBody = tg.bodySchema !== null
  // MCP: real JSON-RPC messages too, or random objects would only ever meet a parse error.
  const mcp = tg.op.operationId === 'postMcp'
  const jsonBody = mcp
    ? fc.oneof(bodyValue(
      tg.bodySchema as Schema
    ), fc.tuple(
      fc.constantFrom(
        'initialize', 'ping', 'tools/list', 'tools/call', 'resources/list', 'notifications/initialized', 'nope'
      ),
      fc.integer({ min: 1, max: 99 }),
      fc.constantFrom('list_invitations', 'list_members', 'invite_user', 'revoke_invitation', 'nope'),
      fc.jsonValue({ maxDepth: 1 })
    )
      .map(([method, id, name, args]) => ({
        jsonrpc: '2.0',
        ...(method.startsWith('notifications/') ? {} : { id }),
        method,
        params: method === 'initialize'
          ? { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }
          : method === 'tools/call' ? { name, arguments: args } : {}
      })))
    : hasBody ? bodyValue(tg.bodySchema as Schema) : fc.jsonValue({ maxDepth: 2 })
  const body: fc.Arbitrary<{ payload?: string, type?: string }> = fc.oneof(
    {
      weight: hasBody ? 6 : 1,
      arbitrary: fc.tuple(
        jsonBody,
        fc.oneof(
          { weight: 5, arbitrary: fc.constant('application/json') },
          { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) }
        )
      ).map(([v, type]) => ({ payload: JSON.stringify(v) ?? 'null', type }))
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom(
          '{', '{"a":', 'nope', '', '[]', '"str"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}',
          '\uFEFF{}', '{"email":"a@example.com"}garbage', 'x'.repeat(70 * 1024)
        ),
        fc.constantFrom(...CONTENT_TYPES)
      ).map(([payload, type]) => ({ payload, type }))
    },
    { weight: hasBody ? 1 : 4, arbitrary: fc.constant({}) }
  )
  const auth = fc.oneof(
    fc.constant(undefined),
    fc.constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', 'Bearer wsk_nope', 'bearer x'.padEnd(300, 'x')),
    printable.map(s => `Bearer ${s}`),
    ...(caller === 'admin' ? [fc.constant(`Bearer ${f.apiKey}`), fc.constant(`Bearer ${f.apiKey}`)] : [])
  )
  const accept = fc.oneof(
    { weight: mcp ? 4 : 0, arbitrary: fc.constant('application/json, text/event-stream') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined, 'application/json', 'text/event-stream', 'application/json, text/event-stream', 'text/html', '*/*',
        'image/png'
      )
    }
  )
  return fc.record({
    path: fc.tuple(...pathParams.map(() => pathValue(f))),
    query: fc.tuple(...queryParams.map(p => queryValue(p))),
    extraQuery: fc.option(fc.tuple(fc.string({ minLength: 1, maxLength: 8 }), anyText), { nil: undefined }),
    headers: fc.tuple(...headerParams.map(() => fc.option(printable, { nil: undefined }))),
    cookie: cookieHeader(f, validCookie),
    authorization: auth,
    accept,
    slack: fc.option(
      fc.record({ sig: printable.map(s => `v0=${s}`), ts: fc.oneof(fc.integer().map(String), printable) }),
      { nil: undefined }
    ),
    body
  }).map(r => {
    let url = tg.path
    pathParams.forEach((p, i) => { url = url.replace(`{${p.name}}`, encodeURIComponent(r.path[i] as string)) })
    const qs = new URLSearchParams()
    queryParams.forEach((p, i) => {
      const v = r.query[i]
      for (const x of [v ?? []].flat()) qs.append(p.name, x)
    })
    if (r.extraQuery !== undefined) qs.append(r.extraQuery[0], r.extraQuery[1])
    const q = qs.toString()
    if (q !== '') url += `?${q}`
    const headers: Record<string, string> = {}
    headerParams.forEach((p, i) => { const v = r.headers[i]; if (v !== undefined) headers[p.name.toLowerCase()] = v })
    if (r.cookie !== undefined) headers.cookie = r.cookie
    if (r.authorization !== undefined) headers.authorization = r.authorization
    if (r.accept !== undefined) headers.accept = r.accept
    if (r.slack !== undefined) { headers['x-slack-signature'] = r.slack.sig; headers['x-slack-request-timestamp'] = r.slack.ts }
    if (r.body.type !== undefined && r.body.type !== '') headers['content-type'] = r.body.type
    const opts: InjectOptions = { method: tg.method as NonNullable<InjectOptions['method']>, url, headers }
    if (r.body.payload !== undefined) opts.payload = r.body.payload
    const shown = r.body.payload !== undefined && r.body.payload.length > 300 ? `${r.body.payload.slice(0, 300)}… (${r.body.payload.length} bytes)` : r.body.payload
    const shownHeaders = Object.fromEntries(
      Object.entries(headers).map(([k, v]) => [k, v.length > 300 ? `${v.slice(0, 300)}… (${v.length} chars)` : v])
    )
    return {
      opts,
      summary: JSON.stringify({
        method: tg.method,
        url: url.length > 400 ? url.slice(0, 400) + '…' : url,
        headers: shownHeaders,
        payload: shown
      })
    }
  })
}

// ---------------------------------------------------------------- known violations

// Violations found by this suite in code it does not own, reported to their owners. Each one is
// shown as a TODO with a count and an example instead of failing the suite; FUZZ_STRICT=1 makes
// them fail. Remove an entry once it is fixed: anything not listed here fails at once.
const STRICT = process.env.FUZZ_STRICT === '1'

interface Known {
  id: string,
  what: string,
  matches: (tg: Target, opts: InjectOptions, status: number, body: string) => boolean
}
// None at present: missing-body-500, max-param-length-414 and body-on-bodyless-operation were
// fixed in src/app.ts (required bodies, frameworkErrors, bodies ignored where none is declared).
const KNOWN: Known[] = []

// ---------------------------------------------------------------- the test

t.test('the checker itself fails on what it must catch', async t => {
  const json = { 'content-type': 'application/json; charset=utf-8' }
  t.not(
    contractProblems('GET', '/api/health', { statusCode: 418, headers: json, body: '{}' }).length, 0,
    'an undeclared status'
  )
  t.not(
    contractProblems('GET', '/api/health', { statusCode: 200, headers: json, body: '{"status":"ok"}' }).length, 0,
    'a body off its schema'
  )
  t.not(
    contractProblems(
      'POST', '/api/users/invite', { statusCode: 400, headers: { 'content-type': 'text/html' }, body: '<p>' }
    ).length,
    0, 'an undeclared media type'
  )
  t.same(
    contractProblems(
      'POST', '/api/users/invite', { statusCode: 401, headers: json, body: '{"message":"x","code":"UNAUTHENTICATED"}' }
    ),
    [], 'a conforming answer'
  )
})

t.test(`contract fuzzing of every operation (FUZZ_SEED=${SEED})`, async t => {
  const started = Date.now()
  // Limits high enough that validation and handlers are reached rather than only the 429 path
  // (rate limiting has suites of its own); Slack and WorkOS stay unconfigured.
  const h = await build(
    t,
    {
      env: {
        AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
        INVITE_EMAILS_PER_HOUR: '100000',
        API_KEY_RATE_LIMIT_PER_MINUTE: '1000000'
      }
    }
  )
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const invited = await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie: admin.cookie },
    payload: { email: 'fuzz-invitee@example.com', role: 'member' }
  })
  t.equal(invited.statusCode, 200, 'fixture invitation')
  const list = await h.inject({ method: 'GET', url: '/api/invitations', headers: { cookie: admin.cookie } })
  const key = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie },
    payload: { name: 'fuzz', scopes: ALL_SCOPES }
  })
  t.equal(key.statusCode, 201, 'fixture API key (for MCP)')
  // A second key whose id the fuzzer may revoke; the MCP key above must keep working.
  const spare = await h.inject({
    method: 'POST',
    url: '/api/api-keys',
    headers: { cookie: admin.cookie },
    payload: { name: 'fuzz-spare', scopes: ALL_SCOPES }
  })
  const f: Fixtures = {
    secret: h.config.session.secret,
    publicUrl: h.config.publicUrl,
    adminCookie: admin.cookie,
    memberCookie: member.cookie,
    apiKey: (key.json() as { secret: string }).secret,
    // Not the admin's own id: deleting or demoting the caller would end the admin half early.
    knownIds: [
      member.userId, (list.json() as { items: Array<{ id: string }> }).items[0]?.id ?? member.userId,
      (spare.json() as { id: string }).id
    ]
  }

  const all = targets()
  const fuzzStart = Date.now()
  const properties = all.length * 2
  let runs = 0
  const statuses = new Map<string, number>()
  const reached = new Set<string>()
  const knownSeen = new Map<string, { count: number, example: string }>()
  let index = 0
  for (const tg of all) {
    for (const caller of ['anonymous', 'admin'] as const) {
      const seed = SEED + index++
      // Each property gets an equal share of what is left of the time budget.
      const left = properties - index + 1
      const share = Math.max(MIN_SHARE_MS, Math.floor((TIME_MS - (Date.now() - fuzzStart)) / left))
      await t.test(`${tg.method} ${tg.path} (${tg.op.operationId}), ${caller}`, async t => {
        let n = 0
        const property = fc.asyncProperty(request(tg, f, caller), async ({ opts, summary }) => {
          n++
          // Logout with the admin's session (the cookie, or a tampered copy that still verifies:
          // base64url's last character carries spare bits) would end it for the runs after it.
          if (tg.op.operationId === 'postAuthLogout' && typeof opts.headers?.cookie === 'string') {
            const cookie = opts.headers.cookie
            for (const m of cookie.matchAll(/service_session\s*=\s*([^;\s]*)/g)) {
              if (h.app.services.sessions.sessionIdOf(m[1] as string) === admin.sessionId) {
                const fresh = await h.app.services.sessions.start(h.db, admin.userId, 'signup')
                opts.headers.cookie = cookie.replace(m[1] as string, fresh.token)
              }
            }
          }
          const res = await h.inject(opts)
          statuses.set(
            `${tg.op.operationId} ${res.statusCode}`, (statuses.get(`${tg.op.operationId} ${res.statusCode}`) ?? 0) + 1
          )
          if (caller === 'admin' && res.statusCode < 300) reached.add(tg.op.operationId)
          const problems = contractProblems(tg.method, opts.url as string, res)
          if (res.statusCode >= 500) {
            problems.push(
            `a ${res.statusCode} answer (no request may cause a 5xx): ${res.body.slice(0, 300)}`
            )
          }
          const known = problems.length > 0 && !STRICT
            ? KNOWN.find(k => k.matches(
              tg, opts, res.statusCode, res.body
            ))
            : undefined
          if (known !== undefined) {
            const seen = knownSeen.get(known.id) ?? {
              count: 0,
              example: `${summary} → ${res.statusCode} ${res.body.slice(0, 200)}`
            }
            seen.count++
            knownSeen.set(known.id, seen)
            return
          }
          if (problems.length > 0) {
            throw new Error(
            `${problems.join('\n')}\nrequest: ${summary}\nresponse: ${res.statusCode} ${res.body.slice(0, 300)}`
            )
          }
        })
        const details = await fc.check(property, { seed, numRuns: RUNS, interruptAfterTimeLimit: share })
        if (details.failed && details.counterexample !== null) {
          // The shrunk counterexample: the smallest request found that breaks the contract.
          t.fail(
            `contract violation (reproduce with FUZZ_SEED=${SEED}; property seed ${seed}, path ${String(
              details.counterexamplePath
            )})\n${String((details.errorInstance as Error | undefined)?.message ?? details.errorInstance)}`
          )
        } else {
          t.pass(`${n} requests conform${details.interrupted ? ' (time share used up)' : ''}`)
        }
        runs += n
      })
    }
  }
  t.comment(
    `contract fuzz: ${runs} requests over ${all.length} operations × 2 callers in ${Date.now() - fuzzStart} ms (setup ${fuzzStart - started} ms), FUZZ_SEED=${SEED}`
  )
  t.comment(`statuses seen: ${[...statuses.entries()].sort().map(([k, v]) => `${k}×${v}`).join(', ')}`)
  for (const k of KNOWN) {
    const seen = knownSeen.get(k.id)
    if (seen !== undefined) {
      t.fail(
      `known contract violation ${k.id} (${seen.count}×): ${k.what}\nexample: ${seen.example}`,
      { todo: 'reported to its owner; FUZZ_STRICT=1 fails on it' }
      )
    }
  }
  t.ok(runs >= all.length * 2, 'every operation was exercised')
  // The admin half must get past authentication and validation, or it fuzzes nothing but 401s.
  // Public operations alone make 9; 8 cannot succeed here (Slack and WorkOS unconfigured, no
  // valid signup/verify token). A loaded machine may leave a few with too few runs.
  const succeeded = all.filter(tg => reached.has(tg.op.operationId)).length
  t.ok(succeeded >= 14, `the signed-in half reached a 2xx on ${succeeded} of ${all.length} operations`)
})
