import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { loadavg } from 'node:os'
import { join } from 'node:path'
import { openDatabase, type Database } from '../src/db/client.js'
import { projectRoot } from '../src/paths.js'
import { startSinkSmtp } from '../scripts/lib/measure-peers.js'
import { cannon, median, type Measured, type Pinning } from './load.js'
import { seedInvitations, seedMembers, seedWorkspaces } from './scale-seed.js'
import { cleanUp, startService, stop, throwawayDatabase, type Service, type Throwaway } from './servers.js'

// `npm run bench -- --scale`: how the cost of a request grows with the data, on PostgreSQL. One
// database per size, its bench admin's workspace holding 100 (two list pages), 100k or 1M
// invitations, beside 10k members and 999 other workspaces (20 invitations each); the rows are
// seeded set-based (bench/scale-seed.ts) as the service writes them, then VACUUM ANALYZE (the
// state autovacuum leaves). A service runs on each; rounds alternate between the sizes, load by
// load, so the machine's drift hits every size alike. Measured: p99 of one list page
// (GET /api/invitations?limit=50), of the second page (its cursor), of an invite (a unique address
// per request, loopback SMTP) and of GET /api/health; each target: p99 within 1.5× of the smallest
// database's (and never less than its + 1 ms: autocannon counts whole ms). Then, on the 1M
// database: 1,000 concurrent connections on health and 200 concurrent invites, counting errors;
// and the database pool size: 200 concurrent invites per DATABASE_POOL_MAX (5, 10, 20, 40), a
// fresh database and service each, alternating, throughput and p99.

export interface ScaleOptions {
  /** A PostgreSQL server URL; each database made here is created and dropped on it. */
  pgUrl: string
  rounds: number
  durationSeconds: number
  warmupSeconds: number
  /** Connections of the per-size measurements (the concurrency checks use their own). */
  connections: number
  pin: Pinning
  /** Run `npm run build` first (the service is measured as `npm start` runs it). */
  build: boolean
  /**
   * Invitations seeded in the big workspace, in growing order (default 100, 100k, 1M: the "empty"
   * database holds two pages, so that its list page is a full page too).
   */
  sizes?: number[]
  pools?: number[]
  /** Concurrent invites of the concurrency and pool checks (default 200); health gets 5× as many connections. */
  concurrentInvites?: number
  /** Prefix of the throwaway databases' names. */
  databasePrefix?: string
}

const MEMBERS = 10_000
const WORKSPACES = 1_000
const SMALL_WORKSPACE_INVITATIONS = 20
const INVITE_CONNECTIONS = 200
const HEALTH_PER_INVITE = 5
const GROWTH = 1.5
// 200 invites in flight take seconds to drain on a loaded machine: rounds at least this long
// (or twice --duration when that is shorter: a smoke run at tiny sizes).
const CONCURRENT_SECONDS = 10

const write = (s: string): void => { process.stdout.write(s) }
const load = (): string => loadavg().map(l => l.toFixed(2)).join(' ')

/** Rounds of one load: every round's figures, and the median and range of p99. */
interface Series { name: string, rounds: Measured[] }
const p99s = (s: Series): number[] => s.rounds.map(r => r.p99)
const medianP99 = (s: Series): number => median(p99s(s))
const errors = (s: Series): number => s.rounds.reduce((a, r) => a + r.unexpected, 0)

function formatSeries (label: string, s: Series): string {
  const ps = p99s(s)
  const rps = median(s.rounds.map(r => r.rps)).toFixed(0)
  const range = `${Math.min(...ps)}–${Math.max(...ps)}`
  const p50 = median(s.rounds.map(r => r.p50)).toFixed(1)
  return `${label.padEnd(12)} ${s.name.padEnd(24)} ${rps.padStart(7)} ${p50.padStart(7)} ` +
    `${medianP99(s).toFixed(1).padStart(7)} ${range.padStart(9)} ${String(errors(s)).padStart(6)}\n`
}

/** A warm-up of each load, then `rounds` rounds of them in turn (at least `minSeconds` each). */
async function runRounds (
  loads: Array<{ name: string, run: (seconds: number) => Promise<Measured> }>,
  o: ScaleOptions,
  minSeconds = 0
): Promise<Series[]> {
  for (const l of loads) await l.run(o.warmupSeconds)
  const series = loads.map(l => ({ name: l.name, rounds: [] as Measured[] }))
  for (let r = 0; r < o.rounds; r++) {
    for (const [i, l] of loads.entries()) series[i]?.rounds.push(await l.run(Math.max(minSeconds, o.durationSeconds)))
  }
  return series
}

/** Answered at all and without an error: a load whose requests are all still in flight at the end failed. */
const clean = (s: Series): boolean => errors(s) === 0 && s.rounds.every(r => r.total > 0)

/** GET a path as the admin; the answer's JSON. */
async function getJson (svc: Service, path: string): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${svc.port}${path}`, { headers: { cookie: svc.cookie } })
  if (res.status !== 200) throw new Error(`GET ${path} answered ${res.status}`)
  return await res.json()
}

function inviteLoad (svc: Service, connections: number, tag: string): (seconds: number) => Promise<Measured> {
  let n = 0
  return cannon(svc.port, 200, connections, {
    method: 'POST',
    path: '/api/users/invite',
    headers: { 'content-type': 'application/json', cookie: svc.cookie },
    setupRequest: req => {
      const body = JSON.stringify({ email: `${tag}-${Date.now()}-${++n}@bench.test`, role: 'member' })
      return { ...req, body }
    }
  })
}

interface Load { name: string, run: (seconds: number) => Promise<Measured> }

/** The loads measured at each size, the list's second page included (its cursor read first). */
async function sizeLoads (svc: Service, o: ScaleOptions, size: number): Promise<Load[]> {
  const list = '/api/invitations?limit=50'
  const first = await getJson(svc, list) as { nextCursor: string | null }
  const get = (path: string, asAdmin = true): ReturnType<typeof cannon> =>
    cannon(svc.port, 200, o.connections, { method: 'GET', path, headers: asAdmin ? { cookie: svc.cookie } : {} })
  const loads = [
    { name: 'GET /api/health', run: get('/api/health', false) },
    { name: 'list page', run: get(list) },
    { name: 'invite', run: inviteLoad(svc, o.connections, `s${size}`) }
  ]
  if (first.nextCursor !== null) {
    loads.splice(2, 0, { name: 'list page 2', run: get(`${list}&cursor=${encodeURIComponent(first.nextCursor)}`) })
  }
  return loads
}

/**
 * The service's connection caps opened for the concurrency check: it measures the service under
 * that many clients, and all of them come from the one load generator's address — the defaults
 * (MAX_CONNECTIONS 800, MAX_CONNECTIONS_PER_ADDRESS 100) would refuse most of them by design.
 */
function connectionCaps (o: ScaleOptions): Record<string, string> {
  const invites = o.concurrentInvites ?? INVITE_CONNECTIONS
  return { MAX_CONNECTIONS: String(invites * HEALTH_PER_INVITE + 100), MAX_CONNECTIONS_PER_ADDRESS: '0' }
}

/** The bench admin's workspace (startService made it, and says which). */
async function seedBase (db: Database, svc: Service): Promise<string> {
  const admin = await db.query<{ workspaceId: string }>(
    'SELECT workspace_id AS "workspaceId" FROM users WHERE email = $1', [svc.adminEmail])
  const workspaceId = admin.rows[0]?.workspaceId
  if (workspaceId === undefined) throw new Error(`scale: the bench admin ${svc.adminEmail} is missing`)
  const now = new Date()
  const small = await seedWorkspaces(db, { count: WORKSPACES - 1, now })
  await seedInvitations(db, { workspaceIds: small, from: 0, to: SMALL_WORKSPACE_INVITATIONS, now })
  await seedMembers(db, { workspaceIds: [workspaceId], count: MEMBERS, now })
  return workspaceId
}

/** Invitations k in [from, to) of the big workspace, in steps of 100k with progress. */
async function growTo (db: Database, workspaceId: string, from: number, to: number): Promise<void> {
  const now = new Date()
  const step = 100_000
  for (let k = from; k < to; k += step) {
    const t = Date.now()
    await seedInvitations(db, { workspaceIds: [workspaceId], from: k, to: Math.min(to, k + step), now })
    write(`  seeded ${Math.min(to, k + step).toLocaleString('en')} invitations (${Date.now() - t} ms)\n`)
  }
}

function target (name: string, at: number, value: number, base: { size: number, p99: number }): string {
  const limit = Math.max(GROWTH * base.p99, base.p99 + 1)
  const verdict = value <= limit ? 'MET ' : 'MISS'
  const at0 = `${base.size.toLocaleString('en')} (${base.p99.toFixed(1)} ms, limit ${limit.toFixed(1)} ms)`
  return `${verdict}  ${name} p99 at ${at.toLocaleString('en')} invitations ≤ ${GROWTH}× at ${at0}: ` +
    `${value.toFixed(1)} ms\n`
}

const HEADER = `${'invitations'.padEnd(12)} ${'load'.padEnd(24)} ${'req/s'.padStart(7)} ${'p50 ms'.padStart(7)} ` +
  `${'p99 ms'.padStart(7)} ${'p99 range'.padStart(9)} ${'errors'.padStart(6)}\n`

/** A throwaway database seeded to `size` invitations, and the service on it. */
async function sizedService (o: ScaleOptions, smtpUrl: string, database: Throwaway, size: number): Promise<Service> {
  const svc = await startService(o.pin, 'postgres', smtpUrl, database.url, null, connectionCaps(o))
  const long = { queryTimeoutMs: 600_000, transactionTimeoutMs: 600_000 }
  const db = await openDatabase({ url: database.url, dataDir: null, ...long })
  try {
    const workspaceId = await seedBase(db, svc)
    await growTo(db, workspaceId, 0, size)
    const t = Date.now()
    await db.exec('VACUUM ANALYZE')
    write(`scale: ${size.toLocaleString('en')} invitations, ${MEMBERS.toLocaleString('en')} members, ` +
      `${WORKSPACES.toLocaleString('en')} workspaces (VACUUM ANALYZE ${Date.now() - t} ms)\n`)
  } finally {
    await db.close()
  }
  return svc
}

/**
 * The growth table and targets: one database and service per size, all running, and the rounds
 * alternating between sizes (load by load), so the machine's drift hits every size alike.
 */
async function growth (o: ScaleOptions, smtpUrl: string, prefix: string): Promise<void> {
  const sizes = o.sizes ?? [100, 100_000, 1_000_000]
  const databases: Throwaway[] = []
  try {
    const services: Service[] = []
    for (const size of sizes) {
      const database = await throwawayDatabase(o.pgUrl, prefix)
      databases.push(database)
      services.push(await sizedService(o, smtpUrl, database, size))
    }
    const perSize = await Promise.all(services.map(async (svc, i) => await sizeLoads(svc, o, sizes[i] ?? 0)))
    // Load by load, every size in turn: health at each size, then the list page at each size…
    const names = [...new Set(perSize.flatMap(loads => loads.map(l => l.name)))]
    const flat = names.flatMap(name => perSize.flatMap((loads, i) => loads.filter(l => l.name === name)
      .map(l => ({ ...l, size: sizes[i] ?? 0 }))))
    write(`scale: ${flat.length} loads × ${o.rounds} rounds × ${o.durationSeconds} s; load average ${load()}\n`)
    const series = await runRounds(flat, o)
    const sized = series.map((s, i) => ({ size: flat[i]?.size ?? 0, s }))
    write(`\nscale: ${o.rounds} rounds × ${o.durationSeconds} s, ${o.connections} connections; load ${load()}\n`)
    write(HEADER)
    for (const r of sized) write(formatSeries(r.size.toLocaleString('en'), r.s))
    const smallest = sizes[0]
    for (const r of sized.filter(r => r.size !== smallest)) {
      const base = sized.find(b => b.size === smallest && b.s.name === r.s.name)
      if (base === undefined) continue
      write(target(r.s.name, r.size, medianP99(r.s), { size: base.size, p99: medianP99(base.s) }))
    }
    const largest = services.at(-1)
    if (largest !== undefined) await concurrency(largest, o)
    for (const svc of services) await stop(svc.proc.child)
  } finally {
    for (const d of databases) await d.drop()
  }
}

/**
 * What the service logged at warn or above (LOG_LEVEL=warn, JSON lines) since `from` characters
 * of its output: the count of each message, most frequent first — what the errors of a load were.
 */
function logged (svc: Service, from: number): string {
  const counts = new Map<string, number>()
  for (const line of svc.proc.output().slice(from).split('\n')) {
    if (!line.startsWith('{')) continue
    try {
      const entry = JSON.parse(line) as { msg?: string, err?: { message?: string } }
      const what = `${entry.msg ?? ''}${entry.err?.message !== undefined ? `: ${entry.err.message}` : ''}`.slice(0, 110)
      counts.set(what, (counts.get(what) ?? 0) + 1)
    } catch { /* a partial line */ }
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([msg, n]) => `  logged ${n}× ${msg}\n`).join('')
}

/** 1,000 connections on health and 200 concurrent invites, on the database as it is now. */
async function concurrency (svc: Service, o: ScaleOptions): Promise<void> {
  const invites = o.concurrentInvites ?? INVITE_CONNECTIONS
  const healthConnections = invites * HEALTH_PER_INVITE
  const health = cannon(svc.port, 200, healthConnections, { method: 'GET', path: '/api/health' })
  const before = svc.proc.output().length
  const series = await runRounds([
    { name: `health × ${healthConnections} conns`, run: health },
    { name: `invite × ${invites} conns`, run: inviteLoad(svc, invites, 'c') }
  ], o, Math.min(CONCURRENT_SECONDS, o.durationSeconds * 2))
  write(`\nscale: concurrency on the largest database; load ${load()}\n${HEADER}`)
  for (const s of series) write(formatSeries('', s))
  for (const s of series) {
    const answered = s.rounds.reduce((a, r) => a + r.total, 0)
    write(`${clean(s) ? 'MET ' : 'MISS'}  ${s.name}: no errors: ${errors(s)} errors in ${answered} answers, ` +
      `p99 ${medianP99(s).toFixed(1)} ms\n`)
  }
  write(logged(svc, before))
}

/**
 * 200 concurrent invites per pool size, each service on a fresh database of its own (the admin's
 * empty workspace), all running and the rounds alternating between them.
 */
async function poolSizes (o: ScaleOptions, smtpUrl: string, prefix: string): Promise<void> {
  const pools = o.pools ?? [5, 10, 20, 40]
  const invites = o.concurrentInvites ?? INVITE_CONNECTIONS
  const databases: Throwaway[] = []
  const rows: Array<{ pool: number, s: Series }> = []
  try {
    const services: Service[] = []
    for (const pool of pools) {
      const database = await throwawayDatabase(o.pgUrl, prefix)
      databases.push(database)
      services.push(await startService(o.pin, 'postgres', smtpUrl, database.url, null, {
        ...connectionCaps(o), DATABASE_POOL_MAX: String(pool)
      }))
    }
    const loads = services.map((svc, i) => ({
      name: `invite × ${invites}, pool ${pools[i] ?? 0}`,
      run: inviteLoad(svc, invites, `p${pools[i] ?? 0}`)
    }))
    const series = await runRounds(loads, o, Math.min(CONCURRENT_SECONDS, o.durationSeconds * 2))
    series.forEach((s, i) => rows.push({ pool: pools[i] ?? 0, s }))
    services.forEach((svc, i) => { write(`pool ${pools[i] ?? 0}:\n${logged(svc, 0)}`) })
    for (const svc of services) await stop(svc.proc.child)
  } finally {
    for (const d of databases) await d.drop()
  }
  write(`\nscale: DATABASE_POOL_MAX under ${invites} concurrent invites; load ${load()}\n${HEADER}`)
  for (const r of rows) write(formatSeries('', r.s))
  // The best: the most invites per second without errors; within 5 % of it, the lowest p99.
  const fine = rows.filter(r => clean(r.s))
  const top = Math.max(...fine.map(r => median(r.s.rounds.map(m => m.rps))))
  const best = fine.filter(r => median(r.s.rounds.map(m => m.rps)) >= 0.95 * top)
    .sort((a, b) => medianP99(a.s) - medianP99(b.s))[0]
  write(best !== undefined
    ? `pool: best DATABASE_POOL_MAX here ${best.pool} (within 5 % of the top throughput, lowest p99)\n`
    : 'pool: every pool size had errors\n')
}

export async function runScale (o: ScaleOptions): Promise<void> {
  if (o.build) {
    write('bench: npm run build\n')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  }
  if (!existsSync(join(projectRoot, 'dist/src/server.js'))) {
    throw new Error('dist/src/server.js is missing: run npm run build')
  }
  const prefix = o.databasePrefix ?? 'ws_bench_scale'
  write(`scale: PostgreSQL; load average ${load()}\n`)
  const smtp = await startSinkSmtp()
  try {
    await growth(o, smtp.url, prefix)
    await poolSizes(o, smtp.url, prefix)
  } finally {
    cleanUp()
    await smtp.close()
  }
}
