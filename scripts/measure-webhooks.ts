// Webhooks under load: N invites over real HTTP to the app as production builds it (fallback
// path, e-mail to a loopback SMTP sink), each event delivered to one subscribed receiver on
// loopback. Reports invite latency without and with the endpoint, the time from the event's
// commit to its delivery (p50/p99), and the job engine's own cost (start time, RSS).
//
//   node --expose-gc --import tsx scripts/measure-webhooks.ts --db postgres   # a throwaway schema
//   node --expose-gc --import tsx scripts/measure-webhooks.ts                 # PGlite in memory
//   node --expose-gc --import tsx scripts/measure-webhooks.ts --n 200
import { createServer } from 'node:http'
import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { insertUser } from '../src/db/users.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { startJobEngine } from '../src/jobs/engine.js'
import { databaseOptions, startMeasuredApp } from './lib/measure-peers.js'

const { values } = parseArgs({ options: { ...databaseOptions, n: { type: 'string', default: '1000' } }, strict: true })
const n = Number(values.n)
// The engine's tables in a schema of their own, dropped at the end (the server may be shared).
const jobsSchema = `jobs_${randomBytes(4).toString('hex')}`
const m = await startMeasuredApp({
  db: values.db,
  url: values.url,
  dataDir: null,
  env: { INVITE_EMAILS_PER_HOUR: '100000', JOBS_SCHEMA: jobsSchema, JOBS_POLL_MS: '500' }
})
const mb = (bytes: number): number => Math.round(bytes / 1048576)

// The engine's cost, measured on a second engine in a fresh schema: its first start (creates
// the schema), a second start (schema there), and the memory it keeps.
const costSchema = `${jobsSchema}_cost`
globalThis.gc?.()
const rssBefore = process.memoryUsage().rss
const engineStart = async (): Promise<number> => {
  const t0 = performance.now()
  const engine = await startJobEngine({
    db: m.db,
    log: { warn () {} } as never,
    schema: costSchema,
    pollSeconds: 2,
    expireSeconds: 35,
    maintenanceSeconds: 60,
    workers: true
  })
  const ms = performance.now() - t0
  await engine.stop()
  return ms
}
const firstStartMs = await engineStart()
const restartMs = await engineStart()
globalThis.gc?.()
const engineRssMb = mb(process.memoryUsage().rss - rssBefore)

// The receiver: answers 204, notes how long after its commit each event arrived.
const arrivals = new Map<string, number>()
const receiver = createServer((req, res) => {
  let body = ''
  req.on('data', (c: Buffer) => { body += c.toString() })
  req.on('end', () => {
    const event = JSON.parse(body) as { id: string, timestamp: string }
    if (!arrivals.has(event.id)) arrivals.set(event.id, Date.now() - Date.parse(event.timestamp))
    res.writeHead(204).end()
  })
})
await new Promise<void>(resolve => { receiver.listen(0, '127.0.0.1', () => { resolve() }) })
const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`

const user = await insertUser(
  m.db, { workspaceId: m.workspaceId, email: 'admin@example.com', name: null, role: 'admin', now: new Date() }
)
const { token } = await m.app.services.sessions.start(m.db, user.id, 'signup')
const headers = { cookie: `${SESSION_COOKIE}=${token}`, 'content-type': 'application/json' }

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN
}
async function invites (prefix: string): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < n; i++) {
    const t0 = performance.now()
    const res = await fetch(`${m.base}/api/users/invite`, {
      method: 'POST', headers, body: JSON.stringify({ email: `${prefix}-${i}@example.com`, role: 'member' })
    })
    await res.arrayBuffer()
    if (res.status !== 200) throw new Error(`invite: ${res.status}`)
    ms.push(performance.now() - t0)
  }
  return ms
}

const without = await invites('plain')
const created = await fetch(`${m.base}/api/webhook-endpoints`, {
  method: 'POST', headers, body: JSON.stringify({ url: hookUrl, eventTypes: ['invitation.created'] })
})
if (created.status !== 201) throw new Error(`endpoint: ${created.status}`)
const withEndpoint = await invites('hooked')
const deadline = Date.now() + 120_000
while (arrivals.size < n && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
const lags = [...arrivals.values()]
const f = (x: number): string => x.toFixed(1)
console.log(JSON.stringify({
  database: m.db.kind,
  invites: n,
  delivered: arrivals.size,
  inviteMs: {
    withoutEndpoint: { p50: f(pct(without, 50)), p99: f(pct(without, 99)) },
    withEndpoint: { p50: f(pct(withEndpoint, 50)), p99: f(pct(withEndpoint, 99)) }
  },
  commitToDeliveryMs: { p50: f(pct(lags, 50)), p99: f(pct(lags, 99)), max: f(Math.max(...lags)) },
  jobEngine: { firstStartMs: f(firstStartMs), restartMs: f(restartMs), rssMb: engineRssMb },
  node: process.version
}, null, 2))

receiver.close()
const kind = m.db.kind
await m.close()
if (kind === 'postgres') {
  const c = new pg.Client({ connectionString: values.url })
  await c.connect()
  await c.query(`DROP SCHEMA IF EXISTS ${jobsSchema} CASCADE; DROP SCHEMA IF EXISTS ${costSchema} CASCADE`)
  await c.end()
}
process.exit(arrivals.size === n ? 0 : 1)
