import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { startCluster } from './lib/cluster.js'
import { freePort } from './lib/free-port.js'

// `npx tsx scripts/rolling-restart.ts --requests 50000`: the rolling-restart soak (not part of
// npm test). Two instances on a
// throwaway PostgreSQL database (and Redis, when REDIS_URL is set) behind nginx configured as
// docs/operating.md says (scripts/lib/cluster.ts writes it); steady load through nginx — reads,
// PATCH /api/workspace/settings, POST /api/users/invite, no health polling — while each instance
// in turn is stopped (SIGTERM: it drains) and started again, over and over, until --requests have
// been answered. Prints every lost request (a status other than the expected one, or a socket
// error) with what nginx logged, and one JSON line of figures. Exit 1 when any was lost.
//
//   DATABASE_URL   a PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
//                  a database of its own is created there and dropped at the end.

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    connections: { type: 'string', default: '8' },
    instances: { type: 'string', default: '2' },
    procedure: { type: 'string', default: 'proxy' }
  }
})
const wanted = Number(values.requests)
const connections = Number(values.connections)
const server = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

const admin = new pg.Client({ connectionString: server })
await admin.connect()
const name = `ws_soak_${randomBytes(5).toString('hex')}`
await admin.query(`CREATE DATABASE ${name}`)
const url = new URL(server)
url.pathname = `/${name}`
const dir = mkdtempSync(join(tmpdir(), 'ws-soak-'))
const port = await freePort()
const { NODE_OPTIONS: _loaders, DATABASE_URL: _db, ...base } = process.env
const dropDatabase = async (): Promise<void> => {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  await admin.end()
}
const cluster = await startCluster({
  instances: Number(values.instances),
  port,
  dir,
  env: {
    ...Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined)),
    DATABASE_URL: url.href,
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    INVITE_EMAILS_PER_HOUR: '100000',
    AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
    METRICS_PORT: ''
  }
}).catch(async (err: unknown) => { rmSync(dir, { recursive: true, force: true }); await dropDatabase(); throw err })
const finish = async (): Promise<void> => {
  await cluster.close()
  rmSync(dir, { recursive: true, force: true })
  await dropDatabase()
}

try {
  const token = cluster.instances
    .map(i => /\/setup\?token=([A-Za-z0-9_-]+)/.exec(i.log())?.[1]).find(x => x !== undefined)
  const setup = await fetch(`${cluster.url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, workspaceName: 'Soak', email: 'admin@soak.test' })
  })
  if (setup.status !== 201) throw new Error(`setup answered ${setup.status}`)
  const cookie = (setup.headers.get('set-cookie') ?? '').split(';')[0] as string

  let n = 0
  const kinds: Array<{ what: string, expect: number, send: () => Promise<Response> }> = [
    {
      what: 'GET /api/users/me',
      expect: 200,
      send: async () => await fetch(`${cluster.url}/api/users/me`, { headers: { cookie } })
    },
    {
      what: 'PATCH /api/workspace/settings',
      expect: 200,
      send: async () => await fetch(`${cluster.url}/api/workspace/settings`, {
        method: 'PATCH',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Soak ${++n}` })
      })
    },
    {
      what: 'POST /api/users/invite',
      expect: 200,
      send: async () => await fetch(`${cluster.url}/api/users/invite`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ email: `person-${++n}@soak.test`, role: 'member' })
      })
    },
    {
      what: 'GET /api/invitations',
      expect: 200,
      send: async () => await fetch(`${cluster.url}/api/invitations?limit=5`, { headers: { cookie } })
    }
  ]
  let answered = 0
  let restarts = 0
  const lost: string[] = []
  const running = { load: true }
  const worker = async (w: number): Promise<void> => {
    for (let k = w; running.load; k++) {
      const r = kinds[k % kinds.length] as (typeof kinds)[number]
      try {
        const res = await r.send()
        const body = await res.text()
        if (res.status !== r.expect) {
          lost.push(`${new Date().toISOString()} ${r.what}: ${res.status} ${body.slice(0, 120)}`)
        }
      } catch (err) {
        const cause = (err as Error & { cause?: Error & { code?: string } }).cause
        const why = `${(err as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`
        lost.push(`${new Date().toISOString()} ${r.what}: ${why}`)
      }
      if (++answered >= wanted) running.load = false
    }
  }
  const load = Promise.all(Array.from({ length: connections }, async (_v, w) => { await worker(w) }))
  const started = Date.now()
  const restartsDone = (async () => {
    await new Promise(resolve => setTimeout(resolve, 1000))
    while (running.load) {
      for (const [i, instance] of cluster.instances.entries()) {
        if (!running.load) break
        const code = await cluster.restart(i, values.procedure as 'signal' | 'proxy')
        if (code !== 0) lost.push(`instance on ${instance.port} exited ${code}`)
        restarts++
        await new Promise(resolve => setTimeout(resolve, 300))
      }
    }
  })()
  await load
  await restartsDone
  const errors = join(dir, 'nginx', 'error.log')
  const nginxLog = existsSync(errors)
    ? readFileSync(errors, 'utf8').split('\n').filter(l => /\[(error|warn)\]/.test(l))
    : []
  for (const l of lost) {
    console.log(`LOST ${l}`)
    const at = Date.parse(l.slice(0, 24))
    const near = cluster.events.map(e => ({ ...e, d: e.at - at })).sort((a, b) => Math.abs(a.d) - Math.abs(b.d)).slice(0, 3)
    for (const e of near) console.log(`  ${e.d} ms: ${e.what}`)
  }
  // Every upstream error but a refused connection (an instance stopped: nginx goes to the next).
  for (const l of nginxLog) if (!l.includes('(111: Connection refused)')) console.log(`NGINX ${l}`)
  const upstreamErrors = new Map<string, number>()
  for (const l of nginxLog) {
    const what = /\] \d+#\d+: \*\d+ (.*?) while /.exec(l)?.[1] ?? l.slice(0, 100)
    upstreamErrors.set(what, (upstreamErrors.get(what) ?? 0) + 1)
  }
  console.log(JSON.stringify({
    requests: answered,
    lost: lost.length,
    restarts,
    seconds: Math.round((Date.now() - started) / 1000),
    nginx: Object.fromEntries(upstreamErrors)
  }))
  process.exitCode = lost.length === 0 ? 0 : 1
} finally {
  await finish()
}
