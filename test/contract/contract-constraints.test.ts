import t from 'tap'
import type { InjectOptions } from 'fastify'
import { loadContract } from '../../src/app.js'
import { build } from '../helpers/build.js'
import { createApiKey, MCP_ACCEPT } from '../helpers/mcp.js'
import { contractProblems, deref, METHODS } from '../helpers/contract.js'
import { eventTypeOf } from '../../src/events/catalogue.js'
import type { AuditAction } from '../../src/db/audit-events.js'

// Every declared constraint is enforced. Walks openapi.yaml (not a hand list): for every
// operation, every parameter (header, path, query) and every body property, it sends one request
// per constraint keyword that breaks exactly that keyword (type, format, pattern, minLength,
// maxLength, enum, minimum, maximum, required, additionalProperties), plus a body of the wrong
// JSON type, of another media type, missing and too large. Everything else in the request is
// valid and authenticated. Each must answer 400/413/415 with an ErrorResponse the contract
// declares for the operation, and a 400 must name the broken field in `details.errors`.

type Schema = Record<string, unknown>
interface Param { name: string, in: 'path' | 'query' | 'header' | 'cookie', required?: boolean, schema: Schema }
interface Op {
  operationId: string,
  parameters?: unknown[],
  requestBody?: {
    required?: boolean,
    content?: Record<string, { schema?: Schema }>
  },
  security?: Array<Record<string, string[]>>
}

const contract = loadContract() as {
  paths: Record<string, Record<string, unknown>>,
  security: Array<Record<string, string[]>>
}

const BODY_LIMIT = 4096
const UUID = '3f0c1d52-7d0e-4d8b-9a57-2b0b0e4a0c11'

/** A value valid under the schema, deterministic. */
function sample (schema: Schema): unknown {
  const s = deref<Schema>(schema)
  if (s.default !== undefined) return s.default
  if (Array.isArray(s.enum)) return s.enum[0]
  if (Array.isArray(s.oneOf)) return sample(s.oneOf[0] as Schema)
  const type = Array.isArray(s.type) ? s.type[0] : s.type
  switch (type) {
    case 'string':
      switch (s.format) {
        case 'email': return 'constraint-check@example.com'
        case 'uuid': return UUID
        case 'date-time': return '2026-01-01T00:00:00.000Z'
        case 'uri': return 'https://example.com/'
      }
      return 'a'.repeat(Math.max(1, Number(s.minLength ?? 1)))
    case 'integer':
    case 'number': return Number(s.minimum ?? 1)
    case 'boolean': return true
    case 'array': return Array.from({ length: Number(s.minItems ?? 0) }, () => sample((s.items ?? {}) as Schema))
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>
      return Object.fromEntries(((s.required ?? []) as string[]).map(k => [k, sample(props[k] ?? {})]))
    }
  }
  return 'x'
}

function matches (schema: Schema, value: string): boolean {
  return new RegExp(schema.pattern as string, 'u').test(value)
}

interface Violation { keyword: string, value?: unknown, omit?: boolean }

/** One value per constraint keyword of `schema` that breaks that keyword (and, where possible, only it). */
function violations (schema: Schema, where: 'body' | 'text'): Violation[] {
  const s = deref<Schema>(schema)
  const out: Violation[] = []
  const types = new Set([s.type].flat().filter((x): x is string => typeof x === 'string'))
  // Query, path and header values are strings on the wire: only non-string types can be broken.
  if (types.size > 0) {
    if (where === 'body') {
      out.push({ keyword: 'type', value: types.has('string') ? 42 : 'text' })
    } else if (!types.has('string')) {
      out.push({ keyword: 'type', value: 'not-a-number' })
    }
  }
  if (Array.isArray(s.enum)) out.push({ keyword: 'enum', value: 'not-one-of-the-values' })
  switch (s.format) {
    case 'email': out.push({ keyword: 'format', value: 'not-an-address' }); break
    case 'uuid': out.push({ keyword: 'format', value: 'not-a-uuid' }); break
    case 'date-time': out.push({ keyword: 'format', value: 'yesterday' }); break
    case 'uri': out.push({ keyword: 'format', value: 'not a uri' }); break
  }
  if (typeof s.minLength === 'number' && s.minLength > 0) {
    out.push({
      keyword: 'minLength',
      value: 'a'.repeat(s.minLength - 1)
    })
  }
  if (typeof s.maxLength === 'number') {
    const long = s.format === 'email' ? `${'a'.repeat(s.maxLength)}@example.com` : 'a'.repeat(s.maxLength + 1)
    out.push({ keyword: 'maxLength', value: long })
  }
  if (typeof s.pattern === 'string') {
    const base = String(sample({ ...s, pattern: undefined }))
    const candidate = [`${base}\u0000`, 'a\u0000b', `${base}\u0007`, ' ', '!', '']
      .find(c => !matches(s, c) && (typeof s.maxLength !== 'number' || c.length <= s.maxLength) && c.length >= Number(s.minLength ?? 0))
    if (candidate === undefined) {
      throw new Error(
      `no value breaking pattern ${String(s.pattern)}: extend the candidates`
      )
    }
    out.push({ keyword: 'pattern', value: candidate })
  }
  if (typeof s.minimum === 'number') out.push({ keyword: 'minimum', value: s.minimum - 1 })
  if (typeof s.maximum === 'number') out.push({ keyword: 'maximum', value: s.maximum + 1 })
  return out
}

interface Case { label: string, opts: InjectOptions, expect: { in: string, field: string } | null }

interface Callers { cookie: string, apiKey: string }

function baseRequest (
  method: string,
  path: string,
  op: Op,
  params: Param[],
  bodySchema: Schema | null,
  who: Callers
): InjectOptions & { headers: Record<string, string> } {
  let url = path
  for (const p of params.filter(p => p.in === 'path')) url = url.replace(`{${p.name}}`, String(sample(p.schema)))
  const headers: Record<string, string> = {}
  const schemes = (op.security ?? contract.security).flatMap(r => Object.keys(r))
  if (schemes.includes('sessionCookie')) headers.cookie = who.cookie
  if (schemes.includes('apiKey')) { headers.authorization = `Bearer ${who.apiKey}`; headers.accept = MCP_ACCEPT }
  const opts: InjectOptions & { headers: Record<string, string> } = { method: method as 'GET', url, headers }
  if (bodySchema !== null) {
    headers['content-type'] = 'application/json'
    opts.payload = JSON.stringify(sample(bodySchema))
  }
  // A form operation gets a valid form, so that a parameter's case is about the parameter.
  const form = op.requestBody?.content?.['application/x-www-form-urlencoded']?.schema
  if (bodySchema === null && form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded'
    opts.payload = new URLSearchParams(sample(deref<Schema>(form)) as Record<string, string>).toString()
  }
  return opts
}

function withQuery (url: string, name: string, value: string): string {
  return `${url}${url.includes('?') ? '&' : '?'}${encodeURIComponent(name)}=${encodeURIComponent(value)}`
}

function cases (
  method: string,
  path: string,
  op: Op,
  params: Param[],
  bodySchema: Schema | null,
  who: Callers
): Case[] {
  const out: Case[] = []
  const base = () => baseRequest(method, path, op, params, bodySchema, who)
  for (const p of params) {
    for (const v of violations(p.schema, 'text')) {
      const opts = base()
      const text = String(v.value)
      const label = `${p.in} ${p.name}: ${v.keyword}`
      switch (p.in) {
        case 'path': {
          if (text === '') continue // an empty segment is another route, not this parameter
          let url = path
          for (const q of params.filter(q => q.in === 'path')) {
            url = url.replace(
            `{${q.name}}`, encodeURIComponent(q === p ? text : String(sample(q.schema)))
            )
          }
          opts.url = url
          out.push({ label, opts, expect: { in: 'path', field: p.name } })
          break
        }
        case 'query':
          opts.url = withQuery(opts.url as string, p.name, text)
          out.push({ label, opts, expect: { in: 'query', field: p.name } })
          break
        case 'header':
          opts.headers[p.name.toLowerCase()] = text
          out.push({ label, opts, expect: { in: 'header', field: p.name.toLowerCase() } })
          break
      }
    }
    if (p.required === true && p.in !== 'path') {
      out.push({
        label: `${p.in} ${p.name}: required`,
        opts: base(),
        expect: { in: p.in, field: p.in === 'header' ? p.name.toLowerCase() : p.name }
      })
    }
  }
  if (bodySchema !== null) {
    const s = deref<Schema>(bodySchema)
    const valid = sample(s) as Record<string, unknown>
    const withBody = (label: string, payload: string, expect: Case['expect'], type = 'application/json') => {
      const opts = base()
      opts.payload = payload
      opts.headers['content-type'] = type
      out.push({ label, opts, expect })
    }
    withBody('body: type', JSON.stringify(s.type === 'object' ? 42 : 'text'), { in: 'body', field: '' })
    if (s.type === 'object') {
      const props = (s.properties ?? {}) as Record<string, Schema>
      for (const [name, prop] of Object.entries(props)) {
        for (const v of violations(prop, 'body')) {
          withBody(
          `body ${name}: ${v.keyword}`, JSON.stringify({ ...valid, [name]: v.value }), { in: 'body', field: name }
          )
        }
      }
      for (const name of (s.required ?? []) as string[]) {
        const { [name]: _gone, ...rest } = valid
        withBody(`body ${name}: required`, JSON.stringify(rest), { in: 'body', field: name })
      }
      if (s.additionalProperties === false) {
        withBody(
          'body: additionalProperties', JSON.stringify({ ...valid, notInTheContract: 1 }),
          { in: 'body', field: 'notInTheContract' }
        )
      }
    }
    withBody('body: media type', 'text', null, 'text/plain')
    withBody('body: size', JSON.stringify({ ...valid, padding: 'x'.repeat(BODY_LIMIT) }), null)
    // Only a body the contract requires is required (an optional one: test/contract/contract-details.test.ts).
    if (op.requestBody?.required === true) {
      const missing = base()
      delete missing.payload
      delete missing.headers['content-type']
      out.push({ label: 'body: required', opts: missing, expect: { in: 'body', field: '' } })
    }
  }
  return out
}

t.test('every declared constraint of every operation is enforced', async t => {
  const h = await build(
    t,
    {
      env: {
        AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
        API_KEY_RATE_LIMIT_PER_MINUTE: '1000000',
        BODY_LIMIT_BYTES: String(BODY_LIMIT)
      }
    }
  )
  const admin = await h.signIn({ role: 'admin' })
  const who: Callers = { cookie: admin.cookie, apiKey: (await createApiKey(h, admin)).secret }
  const counts = { operations: 0, requests: 0, params: 0, bodyProperties: 0 }
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Op | undefined
      if (op === undefined) continue
      counts.operations++
      const params = [
        ...((item.parameters as unknown[] | undefined) ?? []), ...(op.parameters ?? [])
      ].map(p => deref<Param>(p))
      const body = op.requestBody?.content?.['application/json']?.schema
      const bodySchema = body !== undefined ? deref<Schema>(body) : null
      counts.params += params.length
      counts.bodyProperties += Object.keys((bodySchema?.properties ?? {}) as object).length
      for (const c of cases(method.toUpperCase(), path, op, params, bodySchema, who)) {
        counts.requests++
        const res = await h.inject(c.opts)
        const name = `${method.toUpperCase()} ${path} (${op.operationId}) ${c.label}`
        t.ok([400, 413, 415].includes(res.statusCode), `${name} → ${res.statusCode}`, { body: res.body.slice(0, 300) })
        t.same(
          contractProblems(method, c.opts.url as string, res), [], `${name}: an ErrorResponse the contract declares`
        )
        if (c.expect !== null && res.statusCode === 400 && /^\/(api\/)?scim\/v2\//.test(path)) {
          // A SCIM error has no details: its `detail` (the registry's message) names the field.
          const where = c.expect.field === '' ? `${c.expect.in} ` : `${c.expect.in}.${c.expect.field}`
          const detail = (res.json() as { detail?: string }).detail ?? ''
          t.ok(detail.includes(where), `${name}: detail names ${where}`, { detail })
        } else if (c.expect !== null && res.statusCode === 400) {
          const errors = (res.json() as {
            details?: { errors?: Array<{ in: string, field: string }> }
          }).details?.errors ?? []
          t.ok(
            // An array parameter's bad item is named with its index (types.0): still that field.
            errors.some(e => e.in === c.expect?.in &&
              (e.field === c.expect.field || e.field.startsWith(`${c.expect.field}.`))),
            `${name}: details.errors names ${c.expect.in} ${c.expect.field}`, { errors }
          )
        }
      }
    }
  }
  t.comment(
    `constraints: ${counts.requests} violating requests over ${counts.operations} operations, ${counts.params} parameters, ${counts.bodyProperties} body properties`
  )
  t.ok(counts.params > 0 && counts.bodyProperties > 0)
})

t.test('a method the contract does not list on a path is 404 NOT_FOUND (HEAD included)', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  let checked = 0
  for (const [path, item] of Object.entries(contract.paths)) {
    const url = path.replace(/\{[^}]+\}/g, UUID)
    for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      if (item[method.toLowerCase()] !== undefined) continue
      // PATCH /api/users/me is PATCH /api/users/{userId} with userId "me": that path's operation.
      const other = Object.entries(contract.paths).some(([p, it]) =>
        p !== path && it[method.toLowerCase()] !== undefined &&
        new RegExp('^' + p.replace(/\{[^}]+\}/g, '[^/]+') + '$').test(url))
      if (other) continue
      const res = await h.inject({ method, url, headers: { cookie: admin.cookie } })
      checked++
      t.equal(res.statusCode, 404, `${method} ${path}`)
      if (method !== 'HEAD') {
        // Under /scim/v2 the same answer is a SCIM error.
        t.same(
          res.json(), /^\/(api\/)?scim\/v2\//.test(path)
            ? { schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '404', detail: `${method} ${url} not found` }
            : { message: `${method} ${url} not found`, code: 'NOT_FOUND' },
          `${method} ${path}: an ErrorResponse (a SCIM error under /scim/v2)`
        )
      }
      t.equal(res.headers.allow, undefined)
    }
  }
  t.ok(checked > 50, `${checked} unlisted methods checked`)
})

t.test('no vendor extension decides what is valid or hides behaviour', async t => {
  // Schemas: no x- keyword anywhere (the service's Ajv is strict: one would not even compile),
  // but the words for each value of an enum (`x-enumDescriptions`, the scope catalogue's), which
  // renderers show and no validator reads.
  const found: string[] = []
  const walk = (v: unknown, at: string, inSchema: boolean): void => {
    if (Array.isArray(v)) { v.forEach((x, i) => { walk(x, `${at}/${i}`, inSchema) }); return }
    if (v === null || typeof v !== 'object') return
    for (const [k, x] of Object.entries(v)) {
      if (inSchema && k.startsWith('x-') && k !== 'x-enumDescriptions') found.push(`${at}/${k}`)
      walk(x, `${at}/${k}`, inSchema || k === 'schema' || k === 'schemas')
    }
  }
  walk(contract, '#', false)
  t.same(found, [], 'no x- keyword inside a schema')
  // Operation config that changes what a client sees is said in the operation's own text.
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, op] of Object.entries(item) as Array<[string, {
      description?: string,
      'x-fastify-config'?: Record<string, unknown>,
      responses?: Record<string, unknown>
    }]>) {
      const cfg = op['x-fastify-config']
      if (cfg === undefined) continue
      const text = op.description ?? ''
      if (typeof cfg.unauthenticatedRedirect === 'string') {
        t.ok(
          text.includes(`\`${cfg.unauthenticatedRedirect}\``) && text.includes('401'),
        `${method} ${path}: the redirect instead of a 401 is described`
        )
      }
      if (cfg.authAfterBody === true) {
        t.ok(
          /before the signature/i.test(text), `${method} ${path}: validation before authentication is described`
        )
      }
      if (cfg.rateLimit !== undefined) {
        t.ok(
          op.responses?.['429'] !== undefined && /limited/i.test(text),
        `${method} ${path}: the rate limit is declared and described`
        )
      }
    }
  }
})

t.test('every operation open to API keys names a per-key rate limit', async t => {
  // A key is a program: one program must not take the instance. A key-only operation counts per
  // key (`api-key`); one open to the cookie too counts its key callers only (`api-key-only`).
  const unlimited: string[] = []
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, op] of Object.entries(item) as Array<[string, {
      security?: Array<Record<string, string[]>>,
      'x-fastify-config'?: { rateLimit?: { scope?: string } }
    }]>) {
      const schemes = (op.security ?? []).flatMap(r => Object.keys(r))
      if (!schemes.includes('apiKey')) continue
      const scope = op['x-fastify-config']?.rateLimit?.scope
      // The MCP endpoint counts its JSON-RPC messages; a directory's SCIM requests have a budget of
      // their own (a first import is two requests a person); the other REST operations share one.
      const wanted = schemes.length === 1 && path === '/api/mcp'
        ? 'api-key'
        : /^\/(api\/)?scim\/v2\//.test(path) ? 'directory' : 'api-key-only'
      if (scope !== wanted) unlimited.push(`${method.toUpperCase()} ${path}: ${scope ?? 'no limit'}, not ${wanted}`)
    }
  }
  t.same(unlimited, [], 'each names api-key (MCP), directory (SCIM) or api-key-only (the other REST operations)')
})

t.test('every free-text string in a request says what it refuses (enum, format or pattern)', async t => {
  // A NUL byte in an API key name or a signup name reached PostgreSQL and answered 500; with a
  // pattern on every free-text field the contract says it is invalid and the walk above sends it.
  const loose: string[] = []
  const check = (schema: Schema, at: string): void => {
    const s = deref<Schema>(schema)
    const types = [s.type].flat()
    if (types.includes('string') && s.enum === undefined && s.format === undefined && s.pattern === undefined) loose.push(at)
  }
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const method of METHODS) {
      const op = item[method] as Op | undefined
      if (op === undefined) continue
      for (const p of [
        ...((item.parameters as unknown[] | undefined) ?? []), ...(op.parameters ?? [])
      ].map(x => deref<Param>(x))) {
        // Header values cannot carry control characters in HTTP at all.
        if (p.in !== 'header') check(p.schema, `${method} ${path} ${p.in} ${p.name}`)
      }
      const body = op.requestBody?.content?.['application/json']?.schema
      const props = body !== undefined ? (deref<Schema>(body).properties ?? {}) as Record<string, Schema> : {}
      for (const [name, prop] of Object.entries(props)) check(prop, `${method} ${path} body ${name}`)
    }
  }
  t.same(loose, [], 'no free-text string without a pattern')
})

t.test('a list of distinct enum values allows every value once, and no more (maxItems from the enum)', async t => {
  // Webhook endpoints and the event feed take a list of event types (uniqueItems); its maxItems
  // was kept by hand and fell behind when event types were added. Walked, not listed.
  const wrong: string[] = []
  const walk = (node: unknown, at: string): void => {
    if (node === null || typeof node !== 'object') return
    const s = node as Schema
    if (s.uniqueItems === true && s.items !== undefined) {
      const values = deref<Schema>(s.items).enum as unknown[] | undefined
      if (values !== undefined && s.maxItems !== values.length) {
        wrong.push(`${at}: maxItems ${String(s.maxItems)}, ${values.length} values`)
      }
    }
    for (const [k, v] of Object.entries(s)) walk(v, `${at}/${k}`)
  }
  walk(contract, '#')
  t.same(wrong, [], 'every such list: maxItems = the enum\'s length')
  // And the enum of event types is the catalogue's: what audit actions map to, and webhook.test
  // (sent by an endpoint's test operation, never recorded).
  const eventTypes = deref<Schema>({ $ref: '#/components/schemas/EventType' }).enum as string[]
  const auditActions = deref<Schema>({ $ref: '#/components/schemas/AuditAction' }).enum as AuditAction[] | undefined
  t.ok(auditActions !== undefined, 'the contract lists the audit actions')
  const mapped = new Set((auditActions ?? []).map(a => eventTypeOf(a)).filter(e => e !== null))
  t.same(
    [...mapped, 'webhook.test'].sort(), [...eventTypes].sort(), 'the event types are exactly those the catalogue maps to'
  )
})
