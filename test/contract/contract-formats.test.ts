import t from 'tap'
import fc from 'fast-check'
import { build } from '../helpers/build.js'
import { deref } from '../helpers/contract.js'
import { examplesOf, operations, parameterExample, type Operation } from '../helpers/contract-examples.js'

// Whatever the contract accepts, the service can take: for every input of every operation whose
// schema has a `format` (uri, uuid, email, date-time), is a cursor, or is an integer, values generated to sit
// on the edges of that format (what ajv-formats' regular expressions accept but the code's own
// parser — `new URL()`, PostgreSQL's uuid type, the cursor decoder — may not) are sent in an
// otherwise valid request, as a signed-in admin. Whatever Ajv accepts, the operation must answer
// it with a 2xx or a 4xx: a 5xx means the schema and the code disagree about what the field is.
// The inputs are derived from openapi.yaml, so a field added later is covered without a hand list.

const SEED = Number(process.env.FUZZ_SEED ?? 20261125)
const RUNS = Number(process.env.FORMAT_RUNS ?? 40)

type Node = Record<string, unknown>
type Slot = { op: Operation, in: 'path' | 'query' | 'body', name: string, kind: Kind }
type Kind = 'uri' | 'uuid' | 'email' | 'date-time' | 'cursor' | 'integer'

function kindOf (name: string, schema: Node): Kind | null {
  const types = [schema.type].flat()
  if (types.includes('integer')) return 'integer'
  if (schema.format === 'uri' || schema.format === 'uuid' || schema.format === 'email' || schema.format === 'date-time') {
    return schema.format
  }
  if (typeof schema.format === 'string') throw new Error(`no generator for format ${schema.format} (${name})`)
  if (schema.pattern === '^[A-Za-z0-9_-]+$') return 'cursor'
  return null
}

// Signed doors (Slack, MCP) authenticate before they read anything: the same inputs reach them only
// through the same compiler (src/mcp/tools.ts), tested here through REST.
const SIGNED = /^\/api\/(slack|mcp)\b/

function slots (): Slot[] {
  const out: Slot[] = []
  for (const op of operations()) {
    if (SIGNED.test(op.path)) continue
    for (const p of op.parameters) {
      if (p.in !== 'path' && p.in !== 'query') continue
      const kind = kindOf(p.name, deref(p.schema as Node))
      if (kind !== null) out.push({ op, in: p.in, name: p.name, kind })
    }
    const body = op.requestBody?.content['application/json']?.schema
    const props = body !== undefined
      ? (deref(body as Node).properties as Record<string, Node> | undefined)
      : undefined
    for (const [name, s] of Object.entries(props ?? {})) {
      const kind = kindOf(name, deref(s))
      if (kind !== null) out.push({ op, in: 'body', name, kind })
    }
  }
  return out
}

const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: n, maxLength: n })
const octet = fc.integer({ min: 0, max: 999 })

// Hosts a URI's RFC 3986 grammar allows and a WHATWG parser may still refuse: ports past 65535,
// IPv4-looking names with octets past 255, percent-encoded bytes, invalid punycode, an empty host.
const host = fc.oneof(
  fc.domain(),
  fc.tuple(octet, octet, octet, octet).map(o => o.join('.')),
  fc.ipV6().map(a => `[${a}]`),
  fc.constantFrom('', 'xn--', 'xn--a', 'xn--zz-', 'a..b', '%41', '%00', '%7f', '%C3%A9'),
  fc.tuple(fc.domain(), hex(2)).map(([d, h]) => `${d}%${h}`)
)
const port = fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 999_999 }).map(n => `:${n}`), fc.constant(':'))
const uri = fc.oneof(
  fc.webUrl({ withQueryParameters: true, withFragments: true }),
  fc.tuple(fc.constantFrom('http', 'https', 'HTTPS'), fc.constantFrom('', 'u@', 'u:p@', '@'), host, port, fc.webPath())
    .map(([s, u, h, p, path]) => `${s}://${u}${h}${p}${path}`)
)
const uuid = fc.oneof(
  fc.uuid(),
  fc.uuid().map(u => u.toUpperCase()),
  fc.uuid().map(u => `urn:uuid:${u}`),
  fc.uuid().map(u => `{${u}}`),
  fc.uuid().map(u => u.replaceAll('-', '')),
  fc.string({ maxLength: 40 })
)
const email = fc.oneof(
  fc.emailAddress(),
  fc.tuple(fc.string({ unit: fc.constantFrom(...'ab.+_-!#$%&\'*/=?^`{|}~'), minLength: 1, maxLength: 64 }), fc.domain())
    .map(([l, d]) => `${l}@${d}`)
)
const pad = (n: number, w: number) => String(n).padStart(w, '0')
// RFC 3339 as ajv-formats reads it — any year from 0000, a leap second, lower-case t and z, a space
// for T, offsets to ±23:59, any number of fraction digits — and dates it accepts that no calendar has.
const dateTime = fc.oneof(
  fc.date({ noInvalidDate: true, min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') })
    .map(d => d.toISOString()),
  fc.tuple(
    fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 31 }),
    fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 60 }),
    fc.constantFrom('', '.0', '.123456789', '.99999999999'), fc.constantFrom('T', 't', ' '),
    fc.constantFrom('Z', 'z', '+00:00', '-23:59', '+14:00', '+23:59')
  ).map(([y, mo, d, h, mi, s, f, sep, z]) => `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}${sep}${pad(h, 2)}:${pad(mi, 2)}:${pad(s, 2)}${f}${z}`)
)
const base64url = (s: string) => Buffer.from(s, 'utf8').toString('base64url')
const cursor = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-'), minLength: 1, maxLength: 200 }),
  fc.tuple(
    fc.date({ noInvalidDate: true }).map(d => d.toISOString()),
    fc.oneof(fc.uuid(), fc.bigInt({ min: -1n, max: 2n ** 64n }).map(String), fc.string({ maxLength: 20 }))
  ).map(([iso, id]) => base64url(`${iso}|${id}`))
)
const integer = fc.oneof(
  fc.integer({ min: -1_000, max: 1_000 }).map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constantFrom('1e2', '0x10', '5.0', '+5', '-0', '1.5', 'Infinity', 'NaN', '', '007', '1e400')
)
const ARBITRARY: Record<Kind, fc.Arbitrary<string>> = { uri, uuid, email, 'date-time': dateTime, cursor, integer }

function exampleBody (op: Operation): Node | undefined {
  const media = op.requestBody?.content['application/json']
  if (media === undefined) return undefined
  const value = examplesOf(media as unknown as Node)[0]?.value
  return value !== null && typeof value === 'object' ? { ...(value as Node) } : {}
}

t.test('every formatted input: whatever the schema accepts is answered without a 5xx', async t => {
  const h = await build(t)
  const admin = await h.signIn({ role: 'admin' })
  const all = slots()
  t.ok(all.some(s => s.kind === 'uri') && all.some(s => s.kind === 'uuid') && all.some(s => s.kind === 'email'),
    'the contract\'s inputs with a format were found')
  for (const slot of all) {
    const label = `${slot.op.method} ${slot.op.path} ${slot.in}.${slot.name} (${slot.kind})`
    let accepted = 0
    const failures: string[] = []
    await fc.assert(fc.asyncProperty(ARBITRARY[slot.kind], async value => {
      let path = slot.op.path
      const query = new URLSearchParams()
      for (const p of slot.op.parameters) {
        const v = p.in === slot.in && p.name === slot.name ? value : parameterExample(p)
        if (p.in === 'path') path = path.replace(`{${p.name}}`, encodeURIComponent(String(v)))
        else if (p.in === 'query' && (v !== undefined && (p.required === true || p.name === slot.name))) query.set(p.name, String(v))
      }
      const body = exampleBody(slot.op)
      if (slot.in === 'body' && body !== undefined) body[slot.name] = value
      const qs = query.toString()
      const res = await h.inject({
        method: slot.op.method as 'GET',
        url: path + (qs !== '' ? `?${qs}` : ''),
        headers: { cookie: admin.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {})
      })
      if (res.statusCode !== 400 || res.json().code !== 'VALIDATION_FAILED') accepted++
      if (res.statusCode >= 500) failures.push(`${JSON.stringify(value)} → ${res.statusCode} ${res.body}`)
      return res.statusCode < 500
    }), { seed: SEED, numRuns: RUNS, endOnFailure: true })
      .then(() => { t.pass(`${label}: ${accepted}/${RUNS} not refused as invalid, none answered 5xx`) },
        (err: Error) => { t.fail(`${label}: ${failures[0] ?? err.message}`) })
  }
})
