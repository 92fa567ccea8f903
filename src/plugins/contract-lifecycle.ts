import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'

// The contract's version and deprecations, on the wire (docs/contract-versioning.md):
// - every API answer (JSON, errors included) carries `API-Version`: the contract's info.version,
//   the same version /api/openapi.json and /api/health report (written with the API kind of the
//   security headers, one precomputed set: `apiHeaders` of src/plugins/helmet.ts, given by app.ts);
// - an operation marked `deprecated: true` in openapi.yaml answers every call with `Deprecation`
//   (RFC 9745: `@<unix seconds>` of its `x-deprecated-at`), `Sunset` (RFC 8594, an HTTP-date)
//   when it has an `x-sunset`, and `Link: <…>; rel="deprecation"` to where the deprecation is
//   explained; a deprecated parameter or top-level body field does the same on the calls that
//   send it. Each such call is counted (api_deprecated_calls_total) so an operator sees when
//   removal is safe. What is deprecated is read from the contract at start: no list by hand.

type Json = Record<string, unknown>

/** One deprecated thing of an operation, with its header values. */
interface Notice {
  /** The metric's `use` label: `operation`, `query.<name>`, `header.<name>` or `body.<name>`. */
  use: string
  since: number
  sunset: number | undefined
  link: string
}

/** What an operation has deprecated: itself, or some of its inputs (looked for in each request). */
interface Deprecations {
  operation: Notice | undefined
  query: Map<string, Notice>
  header: Map<string, Notice>
  body: Map<string, Notice>
}

type ContractDeprecations = Map<string, Deprecations>

type OnSend = (request: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>

declare module 'fastify' {
  interface FastifyInstance {
    /** The onSend hook that announces the deprecations of `METHOD /openapi/{path}`, if it has any. */
    deprecationRoute(method: string, openapiPath: string, operationId: string): Pick<RouteShorthandOptions, 'onSend'>
  }
}

/** The contract's info.version. */
export function contractVersion (contract: Json): string {
  return String((contract.info as Json | undefined)?.version ?? '')
}

/** A `YYYY-MM-DD` (or full ISO) date of the contract as epoch milliseconds; throws naming `where`. */
function date (value: unknown, where: string): number {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN
  if (Number.isNaN(ms)) {
    throw new Error(`openapi.yaml: ${where} needs a date (YYYY-MM-DD), not ${JSON.stringify(value) ?? 'none'}`)
  }
  return ms
}

/** The same day six calendar months later (a day that does not exist runs on: 08-31 → 03-03). */
function sixMonthsAfter (ms: number): number {
  const d = new Date(ms)
  d.setUTCMonth(d.getUTCMonth() + 6)
  return d.getTime()
}

/** The notice of a node marked `deprecated: true` (an operation, parameter or schema), or undefined. */
function noticeOf (node: Json | undefined, use: string, where: string, link: string): Notice | undefined {
  if (node?.deprecated !== true) return undefined
  const since = date(node['x-deprecated-at'], `${where}: deprecated, so x-deprecated-at`)
  const sunset = node['x-sunset'] === undefined ? undefined : date(node['x-sunset'], `${where}: x-sunset`)
  // The promise of docs/contract-versioning.md: a client hears of a removal six months ahead.
  if (sunset !== undefined && sunset < sixMonthsAfter(since)) {
    const earliest = new Date(sixMonthsAfter(since)).toISOString().slice(0, 10)
    throw new Error(
      `openapi.yaml: ${where}: x-sunset ${String(node['x-sunset'])} is less than six months after ` +
      `x-deprecated-at ${String(node['x-deprecated-at'])}: set it to ${earliest} or later`
    )
  }
  const own = node['x-deprecation-link']
  return { use, since, sunset, link: typeof own === 'string' ? own : link }
}

function deref (contract: Json, node: unknown): Json | undefined {
  let current = node
  for (let hops = 0; hops < 10; hops++) {
    const ref = typeof current === 'object' && current !== null ? (current as Json).$ref : undefined
    if (typeof ref !== 'string' || !ref.startsWith('#/')) break
    current = ref.slice(2).split('/').reduce<unknown>((n, k) => (n as Json | undefined)?.[k], contract)
  }
  return typeof current === 'object' && current !== null ? current as Json : undefined
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** What operation `method path` of the contract has deprecated. */
function deprecationsOf (
  contract: Json, item: Json | undefined, method: string, path: string, defaultLink: string
): Deprecations {
  const op = deref(contract, item?.[method])
  const where = `${method.toUpperCase()} ${path}`
  const found: Deprecations = {
    operation: noticeOf(op, 'operation', where, defaultLink), query: new Map(), header: new Map(), body: new Map()
  }
  const listed = (node: Json | undefined) => (node?.parameters as unknown[] | undefined) ?? []
  const parameters = [...listed(item), ...listed(op)]
  for (const p of parameters.map(p => deref(contract, p))) {
    const name = String(p?.name ?? '')
    const place = p?.in === 'query' ? found.query : p?.in === 'header' ? found.header : undefined
    const notice = noticeOf(p, `${String(p?.in)}.${name}`, `${where} parameter ${name}`, defaultLink)
    if (place !== undefined && notice !== undefined) place.set(p?.in === 'header' ? name.toLowerCase() : name, notice)
  }
  const content = deref(contract, op?.requestBody)?.content as Record<string, Json> | undefined
  for (const media of Object.values(content ?? {})) {
    const properties = deref(contract, media.schema)?.properties as Json | undefined
    for (const [name, schema] of Object.entries(properties ?? {})) {
      const notice = noticeOf(deref(contract, schema), `body.${name}`, `${where} body field ${name}`, defaultLink)
      if (notice !== undefined) found.body.set(name, notice)
    }
  }
  return found
}

/**
 * What the contract deprecates, by `METHOD /openapi/{path}` (operations with nothing deprecated
 * are left out). Read once at start; throws on a deprecation without a valid date, so a contract
 * that cannot be announced on the wire does not start.
 */
export function readDeprecations (contract: Json, publicUrl: string): ContractDeprecations {
  const defaultLink = `${publicUrl}/api/docs`
  const all: ContractDeprecations = new Map()
  for (const [path, value] of Object.entries((contract.paths ?? {}) as Json)) {
    const item = deref(contract, value)
    for (const method of Object.keys(item ?? {}).filter(m => METHODS.has(m))) {
      const d = deprecationsOf(contract, item, method, path, defaultLink)
      if (d.operation !== undefined || d.query.size + d.header.size + d.body.size > 0) {
        all.set(`${method.toUpperCase()} ${path}`, d)
      }
    }
  }
  return all
}

/** The notices that apply to this request: the operation's, and those of the inputs it sends. */
function applying (d: Deprecations, request: FastifyRequest): Notice[] {
  const out = d.operation === undefined ? [] : [d.operation]
  const sent = (where: Map<string, Notice>, values: unknown) => {
    if (where.size === 0 || typeof values !== 'object' || values === null) return
    for (const [name, notice] of where) if ((values as Json)[name] !== undefined) out.push(notice)
  }
  // The query as sent (request.query has the parameters' defaults filled in).
  if (d.query.size > 0) {
    const q = request.url.indexOf('?')
    sent(d.query, q < 0 ? undefined : Object.fromEntries(new URLSearchParams(request.url.slice(q + 1))))
  }
  sent(d.header, request.headers)
  sent(d.body, request.body)
  return out
}

const seconds = (ms: number) => Math.floor(ms / 1000)

async function contractLifecyclePlugin (
  fastify: FastifyInstance,
  opts: { deprecations: ContractDeprecations }
): Promise<void> {
  fastify.decorate('deprecationRoute', (method: string, openapiPath: string, operationId: string) => {
    const d = opts.deprecations.get(`${method.toUpperCase()} ${openapiPath}`)
    if (d === undefined) return {}
    const onSend: OnSend = async (request, reply, payload) => {
      const notices = applying(d, request)
      if (notices.length === 0) return payload
      // Several deprecated things in one call: the earliest dates, every link.
      const since = Math.min(...notices.map(n => n.since))
      const sunsets = notices.flatMap(n => n.sunset === undefined ? [] : [n.sunset])
      reply.header('deprecation', `@${seconds(since)}`)
      if (sunsets.length > 0) reply.header('sunset', new Date(Math.min(...sunsets)).toUTCString())
      reply.header('link', [...new Set(notices.map(n => `<${n.link}>; rel="deprecation"`))].join(', '))
      for (const n of notices) fastify.meter.deprecatedCall(operationId, n.use)
      return payload
    }
    return { onSend }
  })
}

export default fp(contractLifecyclePlugin, { name: 'contract-lifecycle', fastify: '5.x', dependencies: ['metrics'] })
