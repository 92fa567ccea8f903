import { cannon, type AutocannonRequest, type Measured } from './load.js'
import type { RawWorker, Service } from './servers.js'

// What is measured, each with the answer it must get and the process whose memory is sampled.

export const INVITE = 'invite (fallback, SMTP)'
export const RAW = 'raw work of an invite'
export const HEALTH = 'GET /api/health'
export const UNAUTHENTICATED = '401 invite, no cookie'
export const INVALID = '400 invite, invalid body'

const VALID_BODY = '{"email":"a@bench.test","role":"member"}'
// Three faults at once: a bad address, an unknown role, a property the contract does not allow.
const INVALID_BODY = '{"email":"not-an-email","role":"owner","extra":1}'

export interface Scenario {
  name: string
  group: 'baseline' | 'pglite' | 'postgres'
  pid: () => number
  run: (seconds: number) => Promise<Measured>
}

/**
 * The bare baseline first, then per database: health, 401, 400, an invite (a unique address per
 * request: every one a new invitation with its e-mail) and the raw work of one. `only` (a
 * case-insensitive regex on "group name") keeps a subset; the bare baseline always runs.
 */
export function scenarios (opts: {
  barePort: number
  barePid: () => number
  services: Service[]
  raws: Map<string, RawWorker>
  connections: number
  only?: string | undefined
}): Scenario[] {
  const { connections } = opts
  const json = { 'content-type': 'application/json' }
  let n = 0
  const uniqueAddress = (): string => `b${Date.now()}-${++n}@bench.test`
  const bare = cannon(opts.barePort, 200, connections, { method: 'GET', path: '/' })
  const all: Scenario[] = [{ name: 'bare Fastify GET /', group: 'baseline', pid: opts.barePid, run: bare }]
  for (const svc of opts.services) {
    const pid = (): number => svc.proc.child.pid ?? 0
    const raw = opts.raws.get(svc.db)
    if (raw === undefined) throw new Error(`no raw-work worker for ${svc.db}`)
    const invite = { method: 'POST', path: '/api/users/invite' }
    const admin = { ...json, cookie: svc.cookie }
    const load = (expect: number, req: AutocannonRequest): Scenario['run'] => cannon(svc.port, expect, connections, req)
    all.push(
      { name: HEALTH, group: svc.db, pid, run: load(200, { method: 'GET', path: '/api/health' }) },
      { name: UNAUTHENTICATED, group: svc.db, pid, run: load(401, { ...invite, headers: json, body: VALID_BODY }) },
      { name: INVALID, group: svc.db, pid, run: load(400, { ...invite, headers: admin, body: INVALID_BODY }) },
      {
        name: INVITE,
        group: svc.db,
        pid,
        run: load(200, {
          ...invite,
          headers: admin,
          setupRequest: req => ({ ...req, body: JSON.stringify({ email: uniqueAddress(), role: 'member' }) })
        })
      },
      { name: RAW, group: svc.db, pid: () => raw.child.pid ?? 0, run: raw.run }
    )
  }
  if (opts.only === undefined) return all
  const re = new RegExp(opts.only, 'i')
  return all.filter(s => s.group === 'baseline' || re.test(`${s.group} ${s.name}`))
}
