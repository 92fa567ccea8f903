import { cannon, type AutocannonRequest, type Measured } from './load.js'
import { BARE_PATH, type Framework, type HandWritten, type RawWorker, type Service } from './servers.js'

// What is measured, each with the answer it must get and the process whose memory and CPU are
// sampled. Every path is run against the service and against each hand-written baseline on the
// same database kind (bench/hand-written.ts on Fastify, -hono.ts, -express.ts), with the same
// requests, one after the other: a round measures the service's path, then each baseline's.

export const HEALTH = 'GET /api/health'
const UNAUTHENTICATED = '401 invite, no cookie'
const INVALID = '400 invite, invalid body'
const NOT_FOUND = '404 unknown path'
const RATE_LIMITED = '429 API key over its limit'
export const LIST = 'list page (limit=50)'
/** The same page read with an API key (the service only): key authentication against the cookie's. */
export const LIST_BY_KEY = 'list page (limit=50), API key'
export const INVITE = 'invite (fallback, SMTP)'
const RAW = 'raw work of an invite'

const VALID_BODY = '{"email":"a@bench.test","role":"member"}'
// Three faults at once: a bad address, an unknown role, a property the contract does not allow.
const INVALID_BODY = '{"email":"not-an-email","role":"owner","extra":1}'
// A JSON-RPC call the MCP door refuses with 429 before reading it: the key's one message a minute is spent.
const MCP_BODY = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'

/** A hand-written baseline, by its framework. */
export type HandWrittenServer = `hand-written ${Framework}`
export const handWrittenServer = (framework: Framework): HandWrittenServer => `hand-written ${framework}`
export type Server = 'bare' | 'service' | HandWrittenServer | 'raw' | Variant
/**
 * `--costs`: the same server without (or with) one cross-cutting feature, health only; and bare
 * Fastify in a process that built the service's app first (bench/servers.ts, BARE_AFTER_APP).
 */
export type Variant = 'service, no metrics' | 'service + traces' | 'hand-written, no headers' | 'bare, after the app'
export const VARIANT_BASE: Record<Variant, Server> = {
  'service, no metrics': 'service',
  'service + traces': 'service',
  'hand-written, no headers': 'hand-written Fastify',
  'bare, after the app': 'bare'
}
export interface Scenario {
  name: string
  group: 'baseline' | 'pglite' | 'postgres'
  server: Server
  pid: () => number
  run: (seconds: number) => Promise<Measured>
}

interface Target { port: number, cookie: string, apiKey: string }

/** The HTTP scenarios against one server (the service or a hand-written baseline). */
function httpScenarios (t: Target, connections: number, unique: () => string) {
  const json = { 'content-type': 'application/json' }
  const invite = { method: 'POST', path: '/api/users/invite' }
  const admin = { ...json, cookie: t.cookie }
  const load = (expect: number, req: AutocannonRequest) => cannon(t.port, expect, connections, req)
  return [
    [HEALTH, load(200, { method: 'GET', path: '/api/health' })],
    [UNAUTHENTICATED, load(401, { ...invite, headers: json, body: VALID_BODY })],
    [INVALID, load(400, { ...invite, headers: admin, body: INVALID_BODY })],
    [NOT_FOUND, load(404, { method: 'GET', path: '/api/no-such-path' })],
    [RATE_LIMITED, load(429, {
      method: 'POST',
      path: '/api/mcp',
      headers: { ...json, accept: 'application/json, text/event-stream', authorization: `Bearer ${t.apiKey}` },
      body: MCP_BODY
    })],
    [LIST, load(200, { method: 'GET', path: '/api/invitations?limit=50', headers: { cookie: t.cookie } })],
    [INVITE, load(200, {
      ...invite,
      headers: admin,
      setupRequest: req => ({ ...req, body: JSON.stringify({ email: unique(), role: 'member' }) })
    })]
  ] as const
}

/**
 * The bare baseline first, then per database: each path on the service and on each hand-written
 * baseline, and the raw work of an invite. `only` (a case-insensitive regex on "group server name")
 * keeps a subset; the bare baseline always runs.
 */
export function scenarios (opts: {
  barePort: number
  barePid: () => number
  services: Service[]
  handWritten: HandWritten[]
  raws: Map<string, RawWorker>
  variants: Array<{ db: string, server: Variant, port: number, pid: () => number }>
  /** `--costs`: bare Fastify after the app was built in its process. */
  bareAfterApp?: { port: number, pid: () => number } | undefined
  connections: number
  only?: string | undefined
}): Scenario[] {
  const { connections } = opts
  let n = 0
  const unique = (): string => `b${Date.now()}-${++n}@bench.test`
  const bare = cannon(opts.barePort, 200, connections, { method: 'GET', path: BARE_PATH })
  const all: Scenario[] = [
    { name: `bare Fastify ${HEALTH}`, group: 'baseline', server: 'bare', pid: opts.barePid, run: bare }
  ]
  if (opts.bareAfterApp !== undefined) {
    const { port, pid } = opts.bareAfterApp
    const run = cannon(port, 200, connections, { method: 'GET', path: BARE_PATH })
    all.push({ name: `bare Fastify ${HEALTH}`, group: 'baseline', server: 'bare, after the app', pid, run })
  }
  for (const svc of opts.services) {
    const hands = opts.handWritten.filter(h => h.db === svc.db)
    const raw = opts.raws.get(svc.db)
    if (hands.length === 0 || raw === undefined) throw new Error(`no baselines for ${svc.db}`)
    const theirs = hands.map(h => ({ h, runs: httpScenarios(h, connections, unique) }))
    httpScenarios(svc, connections, unique).forEach(([name, run], i) => {
      all.push({ name, group: svc.db, server: 'service', pid: () => svc.proc.child.pid ?? 0, run })
      for (const { h, runs } of theirs) {
        const server = handWrittenServer(h.framework)
        all.push({ name, group: svc.db, server, pid: () => h.child.pid ?? 0, run: (runs[i] as typeof runs[0])[1] })
      }
    })
    all.push({
      name: LIST_BY_KEY,
      group: svc.db,
      server: 'service',
      pid: () => svc.proc.child.pid ?? 0,
      run: cannon(svc.port, 200, connections, {
        method: 'GET', path: '/api/invitations?limit=50', headers: { authorization: `Bearer ${svc.apiKey}` }
      })
    })
    all.push({ name: RAW, group: svc.db, server: 'raw', pid: () => raw.child.pid ?? 0, run: raw.run })
    for (const v of opts.variants.filter(v => v.db === svc.db)) {
      const run = cannon(v.port, 200, connections, { method: 'GET', path: '/api/health' })
      all.push({ name: HEALTH, group: svc.db, server: v.server, pid: v.pid, run })
    }
  }
  if (opts.only === undefined) return all
  const re = new RegExp(opts.only, 'i')
  return all.filter(s => s.group === 'baseline' || re.test(`${s.group} ${s.server} ${s.name}`))
}
