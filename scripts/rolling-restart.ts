import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { loadEnv, loadRequests, runLoad, setUpWorkspace, startCluster, throwawayDatabase } from './lib/cluster.js'
import { freePort } from './lib/free-port.js'

// `npx tsx scripts/rolling-restart.ts --requests 50000`: the rolling-restart soak (not part of
// npm test). Two instances on a throwaway PostgreSQL database (and Redis, when REDIS_URL is set)
// behind nginx, laid out as docs/operating.md says (scripts/lib/cluster.ts): steady load through
// nginx (scripts/lib/cluster.ts's loadRequests: reads, PATCH, POSTs, health) while each instance
// in turn is restarted as `systemctl restart` restarts it — SIGTERM (it drains and exits), then
// started again on the socket held for it — over and over, until --requests have been answered.
// Prints every lost request (a status other than the expected one, or a socket error) with what
// happened around it and what nginx logged, and one JSON line of figures. Exit 1 when any was lost.
//
//   --own-sockets  each instance listens on a socket of its own (the layout before issue 45 item 9)
//   DATABASE_URL   a PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
//                  a database of its own is created there and dropped at the end.

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '50000' },
    connections: { type: 'string', default: '8' },
    instances: { type: 'string', default: '2' },
    'own-sockets': { type: 'boolean', default: false }
  }
})
const wanted = Number(values.requests)

const database = await throwawayDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', 'ws_soak')
const dir = mkdtempSync(join(tmpdir(), 'ws-soak-'))
const port = await freePort()
const cluster = await startCluster({
  instances: Number(values.instances),
  port,
  dir,
  ownSockets: values['own-sockets'],
  env: loadEnv(database.url, port)
}).catch(async (err: unknown) => { rmSync(dir, { recursive: true, force: true }); await database.drop(); throw err })

try {
  const email = 'admin@cluster.test'
  const cookie = await setUpWorkspace(cluster, email)
  const load = { running: true }
  // What happened to the instances, to set beside each loss.
  const events: Array<{ at: number, what: string }> = []
  let restarts = 0
  const started = Date.now()
  const restarting = (async () => {
    await new Promise(resolve => setTimeout(resolve, 1000))
    while (load.running) {
      for (const instance of cluster.instances) {
        if (!load.running) break
        const p = instance.port
        events.push({ at: Date.now(), what: `SIGTERM to ${p}` })
        const code = await instance.stop()
        for (const line of instance.log().split('\n')) {
          if (line.includes('drained: no longer listening')) {
            events.push({ at: (JSON.parse(line) as { time: number }).time, what: `${p} stopped listening` })
          }
        }
        events.push({ at: Date.now(), what: `${p} exited ${code}` })
        if (code !== 0) events.push({ at: Date.now(), what: `LOST: the instance on ${p} exited ${code}` })
        await instance.start()
        events.push({ at: Date.now(), what: `${p} ready` })
        restarts++
        await new Promise(resolve => setTimeout(resolve, 300))
      }
    }
  })()
  const outcomes = await runLoad(loadRequests(cluster.url, cookie, email), Number(values.connections), o => {
    if (o.length < wanted) return false
    load.running = false
    return true
  })
  await restarting
  const seconds = (Date.now() - started) / 1000
  const lost = outcomes.filter(o => o.failure !== null)
  for (const o of lost) {
    console.log(`LOST ${new Date(o.at).toISOString()} ${o.what}: ${o.failure ?? ''}`)
    const near = events.map(e => ({ ...e, d: e.at - o.at })).sort((a, b) => Math.abs(a.d) - Math.abs(b.d)).slice(0, 3)
    for (const e of near) console.log(`  ${e.d > 0 ? '+' : ''}${e.d} ms: ${e.what}`)
  }
  const exits = events.filter(e => e.what.startsWith('LOST'))
  for (const e of exits) console.log(e.what)
  const errors = join(dir, 'nginx', 'error.log')
  const nginxLog = existsSync(errors)
    ? readFileSync(errors, 'utf8').split('\n').filter(l => /\[(error|warn)\]/.test(l))
    : []
  // Every upstream error but a refused connection (an instance stopped: nginx goes to the next).
  for (const l of nginxLog) if (!l.includes('(111: Connection refused)')) console.log(`NGINX ${l}`)
  const upstreamErrors = new Map<string, number>()
  for (const l of nginxLog) {
    const what = /\] \d+#\d+: \*\d+ (.*?) while /.exec(l)?.[1] ?? l.slice(0, 100)
    upstreamErrors.set(what, (upstreamErrors.get(what) ?? 0) + 1)
  }
  const ms = outcomes.map(o => o.ms).sort((a, b) => a - b)
  const quantile = (q: number): number => Math.round(ms[Math.min(ms.length - 1, Math.floor(ms.length * q))] ?? 0)
  console.log(JSON.stringify({
    requests: outcomes.length,
    lost: lost.length + exits.length,
    restarts,
    seconds: Math.round(seconds),
    p50Ms: quantile(0.5),
    p99Ms: quantile(0.99),
    maxMs: Math.round(ms.at(-1) ?? 0),
    loadAverage: loadavg().map(l => Math.round(l * 100) / 100),
    sockets: values['own-sockets'] ? 'own' : 'held',
    nginx: Object.fromEntries(upstreamErrors)
  }))
  process.exitCode = lost.length + exits.length === 0 ? 0 : 1
} finally {
  await cluster.close()
  rmSync(dir, { recursive: true, force: true })
  await database.drop()
}
