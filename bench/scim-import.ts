import { execFileSync } from 'node:child_process'
import { Agent, request as httpRequest } from 'node:http'
import { cpus, loadavg } from 'node:os'
import { insertWorkspace } from '../src/db/workspaces.js'
import { projectRoot } from '../src/paths.js'
import { startSinkSmtp } from '../scripts/lib/measure-peers.js'
import { directoryKey, importPerson, type ScimSend } from './directory.js'
import { cpuUs, median, percentile, type Pinning } from './load.js'
import { cleanUp, startService, stop, throwawayDatabase } from './servers.js'
import { withServiceApp } from './in-process.js'

// `npm run bench -- --scim`: how fast the service takes a first import from several company
// directories at once, on PostgreSQL. The service runs as `npm start` runs it (compiled, its own
// process, on the servers' CPU); `clients` directory clients (four by default), each the SCIM
// key of a workspace of its own, import their people at the same time over HTTP (a keep-alive
// connection each), one person after another as Okta does: a lookup by userName, then
// POST /api/scim/v2/Users (bench/directory.ts, importPerson). Each round imports `people` people
// in all, shared among the clients; after a warm-up, `rounds` rounds. Per round: people/s (wall
// time, first request to last answer), the CPU time of the service's process per person (/proc:
// what one person costs it, whatever else the machine runs) and the p99 of a person's import.
// Target: at least 400 people/s (the median round), printed MET / MISS. The load average is
// printed before and after: PostgreSQL shares the machine.

export interface ScimImportOptions {
  pgUrl: string
  pin: Pinning
  /** People a round, in all. */
  people: number
  /** Directory clients importing at once, a workspace and a key each. */
  clients: number
  rounds: number
  build: boolean
}

const TARGET_PEOPLE_PER_SECOND = 400
/** People each client imports before the rounds (not measured): the service's code paths warmed. */
const WARMUP_PEOPLE = 25
const SCIM = 'application/scim+json'

const write = (s: string): void => { process.stdout.write(s) }
const loadOf = (): string => loadavg().map(l => l.toFixed(2)).join(' ')

/**
 * `count` workspaces, each with an admin and a directory key, made by the service's own services
 * in this process (on the same database, before the measure; the app is closed after).
 */
async function directoryKeys (databaseUrl: string, count: number): Promise<string[]> {
  return await withServiceApp(databaseUrl, async app => {
    const keys: string[] = []
    for (let k = 1; k <= count; k++) {
      const ws = await insertWorkspace(app.db, { name: `Directory ${k}`, now: new Date() })
      keys.push(await directoryKey(app, ws.id))
    }
    return keys
  })
}

/** A directory client: its key on one keep-alive connection to the service. */
function client (port: number, key: string): ScimSend {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  return async (method, path, body) => await new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const headers = {
      authorization: `Bearer ${key}`,
      accept: SCIM,
      ...(payload !== undefined ? { 'content-type': SCIM, 'content-length': Buffer.byteLength(payload) } : {})
    }
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** Client `k`'s share of a round: `count` people, one after another; each person's time (ms). */
async function importShare (send: ScimSend, label: string, k: number, count: number): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < count; i++) {
    const t = performance.now()
    await importPerson(send, `${label}-${i}@client${k}.bench.test`, `00u-${label}-${i}`)
    ms.push(performance.now() - t)
  }
  return ms
}

interface ScimRound { rate: number, seconds: number, cpuMsPerPerson: number, p99Ms: number }

/** One round: every client its share at once; the people, the wall time and the service's CPU. */
async function round (clients: ScimSend[], pid: number, people: number, label: string): Promise<ScimRound> {
  const shares = clients.map((_, k) => Math.floor(people / clients.length) + (k < people % clients.length ? 1 : 0))
  const cpuBefore = cpuUs(pid)
  const started = performance.now()
  const times = await Promise.all(clients.map(async (send, k) => await importShare(send, label, k, shares[k] ?? 0)))
  const seconds = (performance.now() - started) / 1000
  const cpuMsPerPerson = (cpuUs(pid) - cpuBefore) / 1000 / people
  const all = times.flat().sort((a, b) => a - b)
  return { rate: people / seconds, seconds, cpuMsPerPerson, p99Ms: percentile(all, 99) }
}

export async function runScimImport (o: ScimImportOptions): Promise<void> {
  if (o.clients < 1 || o.people < o.clients) throw new Error('--scim needs --clients ≥ 1 and --people ≥ --clients')
  if (o.build) execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  const smtp = await startSinkSmtp()
  const database = await throwawayDatabase(o.pgUrl, 'ws_bench_scim')
  try {
    const svc = await startService(o.pin, 'postgres', smtp.url, database.url, null)
    const pid = svc.proc.child.pid ?? 0
    const clients = (await directoryKeys(database.url, o.clients)).map(key => client(svc.port, key))
    write(`scim import: PostgreSQL, ${o.clients} directory clients at once (a workspace and SCIM key each), ` +
      `${o.people} people a round, a lookup and POST /api/scim/v2/Users each\n`)
    write(`load average ${loadOf()} (${cpus().length} CPUs) before\n`)
    await round(clients, pid, WARMUP_PEOPLE * o.clients, 'warm')
    const rounds: ScimRound[] = []
    for (let r = 1; r <= o.rounds; r++) {
      const m = await round(clients, pid, o.people, `r${r}`)
      rounds.push(m)
      write(`  round ${r}: ${o.people} people in ${m.seconds.toFixed(1)} s: ${m.rate.toFixed(0)} people/s; ` +
        `service CPU ${m.cpuMsPerPerson.toFixed(2)} ms a person (${(1000 / m.cpuMsPerPerson).toFixed(0)} people/s ` +
        `on its core); a person's import p99 ${m.p99Ms.toFixed(1)} ms\n`)
    }
    const rates = rounds.map(m => m.rate)
    const rate = median(rates)
    const spread = `${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)}`
    write(`${rate >= TARGET_PEOPLE_PER_SECOND ? 'MET ' : 'MISS'}  SCIM import, ${o.clients} clients at once ` +
      `(PostgreSQL) ≥ ${TARGET_PEOPLE_PER_SECOND} people/s: ${rate.toFixed(0)} ` +
      `(median of ${rounds.length} rounds, ${spread})\n`)
    write(`  service CPU a person: median ${median(rounds.map(m => m.cpuMsPerPerson)).toFixed(2)} ms\n`)
    write(`load average ${loadOf()} after\n`)
    await stop(svc.proc.child)
  } finally {
    cleanUp()
    await smtp.close()
    await database.drop()
  }
}
