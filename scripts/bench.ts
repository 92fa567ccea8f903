// `npm run bench` (not part of npm test): throughput, latency and memory of the service as
// `npm start` runs it (compiled, dist/src/server.js, LOG_LEVEL=warn), against two baselines
// measured in the same run, scenarios alternating round by round so drift hits all alike:
//   - a bare Fastify hello-world (for GET /api/health and the 401/400 paths);
//   - the "raw work" of an invitation (the same SQL statements through the repository functions
//     and the same SMTP send through the Mailer, in a loop, no HTTP, same concurrency).
// Scenarios: health, 401 (invite without a cookie), 400 (admin, invalid body), invite (admin,
// fallback path, a unique e-mail per request, loopback SMTP), on PGlite and on PostgreSQL (a
// throwaway database created and dropped here). Prints a table; writes bench/results.json.
//
//   npm run bench                                   # 3 rounds × 5 s per scenario, 10 connections
//   npm run bench -- --rounds 5 --duration 10 --connections 20
//   npm run bench -- --no-postgres                  # PGlite only
//   npm run bench -- --no-pin                       # do not pin servers and load generator to CPUs
//   npm run bench -- --profile                      # also CPU profiles of the services (bench/*.cpuprofile)
//   npm run bench -- --only 'postgres 401' --profile   # a subset (the bare baseline always runs)
//   npm run bench -- --analyze bench/x.cpuprofile   # top frames of a profile
import { fork, spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createRequire } from 'node:module'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir, totalmem } from 'node:os'
import { join, relative } from 'node:path'
import { request as httpRequest } from 'node:http'
import { createServer } from 'node:net'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { SMTPServer } from 'smtp-server'
import { projectRoot } from '../src/paths.js'

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '10' },
    'pg-url': { type: 'string', default: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    'no-postgres': { type: 'boolean', default: false },
    'no-build': { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    out: { type: 'string', default: join(projectRoot, 'bench', 'results.json') },
    analyze: { type: 'string' },
    only: { type: 'string' },
    // Internal: this file, forked, is the raw-work worker.
    'raw-worker': { type: 'string' },
    'raw-url': { type: 'string' },
    'raw-dir': { type: 'string' },
    'raw-smtp': { type: 'string' }
  },
  strict: true
})

// ---------------------------------------------------------------- shared helpers

function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number
}

const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 50)

/** Resident set size of a process in MB (Linux /proc), or NaN elsewhere. */
function rssMb (pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m !== null ? Number(m[1]) / 1024 : NaN
  } catch { return NaN }
}

// ---------------------------------------------------------------- profile analysis

interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, hitCount?: number, children?: number[] }

/** Top frames by self time, and by inclusive time of our own code (src/, handlers/). */
function analyzeProfile (file: string, top = 20): string {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }
  const byId = new Map(prof.nodes.map(n => [n.id, n]))
  const self = new Map<number, number>()
  prof.samples.forEach((id, i) => { self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)) })
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const label = (n: ProfileNode) => {
    const url = n.callFrame.url.replace(/^file:\/\//, '')
    const where = url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url.startsWith(projectRoot) ? relative(projectRoot, url) : url
    return `${n.callFrame.functionName || '(anonymous)'} ${where}${where !== '' ? ':' + String(n.callFrame.lineNumber + 1) : ''}`
  }
  const selfBy = new Map<string, number>()
  for (const [id, us] of self) { const n = byId.get(id); if (n !== undefined) selfBy.set(label(n), (selfBy.get(label(n)) ?? 0) + us) }
  // Inclusive time per package (node_modules/<pkg>) or "ours" / "node" — where the time goes.
  const parent = new Map<number, number>()
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const pkgOf = (n: ProfileNode): string => {
    const url = n.callFrame.url
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
    if (m !== null) return m[1] as string
    if (url.includes('/dist/src/') || url.includes('/dist/handlers/')) return '(ours: dist/src, dist/handlers)'
    if (url.startsWith('node:')) return '(node core)'
    if (url === '') return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)'
    return url
  }
  const inclusive = new Map<string, number>()
  for (const [id, us] of self) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)
      if (n === undefined) break
      const k = pkgOf(n)
      if (!seen.has(k)) { seen.add(k); inclusive.set(k, (inclusive.get(k) ?? 0) + us) }
    }
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`
  const lines = [`profile ${relative(projectRoot, file)}: ${(total / 1e6).toFixed(1)} s sampled`, '  self time, top frames:']
  for (const [k, us] of [...selfBy].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${pct(us)}  ${k}`)
  lines.push('  inclusive time by package:')
  for (const [k, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${pct(us)}  ${k}`)
  return lines.join('\n')
}

// ---------------------------------------------------------------- raw-work worker

async function rawWorker (kind: 'pglite' | 'postgres', url: string | null, dir: string | null, smtpUrl: string): Promise<void> {
  const [{ openDatabase }, { migrate }, { createMailer }, users, ws, inv, audit, sessions, tokens, email] = await Promise.all([
    import('../src/db/client.js'), import('../src/db/migrate.js'), import('../src/mail/mailer.js'), import('../src/db/users.js'),
    import('../src/db/workspaces.js'), import('../src/db/invitations.js'), import('../src/db/audit-events.js'), import('../src/db/sessions.js'),
    import('../src/lib/tokens.js'), import('../src/invitations/email.js')
  ])
  // Same database shape as the service: file-backed PGlite in a data directory of its own
  // (initialised by another process, as the service's is by create-admin), or a pool of 10
  // (DATABASE_POOL_MAX's default) on the same PostgreSQL database.
  const db = await openDatabase({ url, dataDir: kind === 'pglite' ? dir : null, poolMax: 10 })
  await migrate(db)
  const now0 = new Date()
  const w = await ws.insertWorkspace(db, { name: 'Raw bench', now: now0 })
  const admin = await users.insertUser(db, { workspaceId: w.id, email: `raw-admin-${randomBytes(4).toString('hex')}@bench.test`, name: 'Raw Admin', role: 'admin', now: now0 })
  const session = await sessions.insertSession(db, { userId: admin.id, method: 'signup', now: now0, expiresAt: new Date(now0.getTime() + 86_400_000) })
  const log = { info () {}, warn () {}, error () {}, debug () {}, trace () {}, fatal () {}, child () { return log }, level: 'warn', silent () {} }
  const mailer = createMailer({ smtpUrl, from: 'Workspace <no-reply@localhost>', timeoutMs: 5000, dataDir: null, log: log as never })
  const appUrl = 'http://localhost:3000'
  let n = 0

  // One invitation, statement for statement what POST /api/users/invite does on the fallback
  // path: the session lookup, the workspace, the transaction, the e-mail, the delivery record.
  async function once (): Promise<void> {
    const now = new Date()
    const s = await sessions.findActiveSession(db, session.id, now)
    if (s === null) throw new Error('raw: session vanished')
    const workspace = await ws.findWorkspace(db, s.workspaceId)
    if (workspace === null) throw new Error('raw: workspace vanished')
    const to = `raw-${process.pid}-${++n}@bench.test`
    const token = tokens.randomToken(32)
    const row = await db.transaction(async tx => {
      if (await users.findUserByEmail(tx, to) !== null) throw new Error('raw: user exists')
      await inv.expireStalePendingInvitation(tx, workspace.id, to, now)
      const r = await inv.upsertPendingInvitation(tx, { workspaceId: workspace.id, email: to, role: 'member', tokenHash: tokens.hashToken(token), expiresAt: new Date(now.getTime() + 7 * 86_400_000), invitedBy: s.userId, invitedByApiKey: null, now })
      await audit.insertAuditEvent(tx, { workspaceId: workspace.id, action: 'invitation.created', actor: { type: 'user', id: s.userId, label: s.email }, target: { type: 'invitation', id: r.id }, payload: { email: to, role: 'member' }, now })
      return r
    })
    const link = email.signupLink(appUrl, token)
    await mailer.send(email.invitationEmail({ to, workspaceName: workspace.name, inviter: s.name ?? s.email, role: 'member', link, expiresAt: row.expiresAt }))
    await inv.recordDelivery(db, row.id, { status: 'sent', now: new Date() })
  }

  async function run (durationMs: number, connections: number): Promise<void> {
    const latencies: number[] = []
    let errors = 0
    const end = performance.now() + durationMs
    const started = performance.now()
    // Closed loop at the same concurrency as autocannon's connections.
    await Promise.all(Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now()
        try { await once() } catch { errors++ }
        latencies.push(performance.now() - t0)
      }
    }))
    const seconds = (performance.now() - started) / 1000
    latencies.sort((a, b) => a - b)
    process.send?.({ type: 'result', rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), total: latencies.length, errors })
  }

  async function shutdown (): Promise<void> {
    await mailer.close()
    await db.close()
    process.exit(0)
  }

  process.on('message', (m: { type: string, durationMs?: number, connections?: number }) => {
    const fail = (err: Error) => { process.stderr.write(`raw worker: ${err.message}\n`); process.exit(1) }
    if (m.type === 'stop') shutdown().catch(fail)
    if (m.type === 'run') run(m.durationMs ?? 1000, m.connections ?? 10).catch(fail)
  })
  process.send?.({ type: 'ready' })
}

// ---------------------------------------------------------------- the benchmark

interface AutocannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number }
  errors: number
  timeouts: number
  statusCodeStats?: Record<string, { count: number }>
  duration: number
}
interface AutocannonRequest { method?: string, path?: string, headers?: Record<string, string>, body?: string, setupRequest?: (req: AutocannonRequest) => AutocannonRequest }
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string, connections: number, duration: number, requests?: AutocannonRequest[], method?: string, headers?: Record<string, string>, body?: string
}) => Promise<AutocannonResult>

async function freePort (): Promise<number> {
  const s = createServer()
  await new Promise<void>(resolve => { s.listen(0, '127.0.0.1', () => { resolve() }) })
  const { port } = s.address() as { port: number }
  await new Promise<void>(resolve => { s.close(() => { resolve() }) })
  return port
}

async function httpJson (port: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: string, setCookie: string[] }> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers: { ...(payload !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), setCookie: [res.headers['set-cookie'] ?? []].flat() }) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

async function waitFor (what: string, fn: () => Promise<boolean>, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await fn().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

interface Proc { child: ChildProcess, output: () => string }
const children: ChildProcess[] = []

// On a small machine the load generator and the server fight for the same cores, and the
// scheduler's choices swing a 5 s figure by ±50 %. With taskset (util-linux) and 2+ CPUs, the
// servers measured (bare Fastify, the service, the raw-work loop) run on the last CPU and this
// process (autocannon, the SMTP peer) on the first; --no-pin turns it off.
/** The CPUs this process may run on ("0,1", "0-3,6" from taskset), or null without taskset. */
function allowedCpus (): number[] | null {
  try {
    const list = execFileSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' }).split(':').pop()?.trim() ?? ''
    return list.split(',').flatMap(part => {
      const [a, b] = part.split('-').map(Number) as [number, number | undefined]
      return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, i) => a + i)
    }).filter(Number.isInteger)
  } catch {
    return null
  }
}
const CPUS = values['raw-worker'] === undefined && values.analyze === undefined && !values['no-pin'] ? allowedCpus() : null
const PIN = CPUS !== null && CPUS.length >= 2 && (() => {
  try { execFileSync('taskset', ['-a', '-cp', String(CPUS[0]), String(process.pid)], { stdio: 'ignore' }); return true } catch { return false }
})()
const SERVER_CPU = String(CPUS?.at(-1) ?? 0)
const LOAD_CPU = CPUS?.[0] ?? 0
const pinned = (cmd: string, args: string[]): [string, string[]] => PIN ? ['taskset', ['-c', SERVER_CPU, cmd, ...args]] : [cmd, args]

function start (cmd: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const [file, argv] = pinned(cmd, args)
  const child = spawn(file, argv, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let out = ''
  child.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  return { child, output: () => out }
}

async function stop (child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>(resolve => { child.once('exit', () => { resolve() }) })
  child.kill('SIGTERM')
  await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 15_000))])
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

const BARE = `
import Fastify from 'fastify'
const app = Fastify({ logger: false })
app.get('/', async () => ({ hello: 'world' }))
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
`

interface Service { name: string, db: 'pglite' | 'postgres', port: number, proc: Proc, cookie: string }

const tempDirs: string[] = []

async function startService (db: 'pglite' | 'postgres', smtpUrl: string, databaseUrl: string | null, profileDir: string | null): Promise<Service> {
  const dataDir = mkdtempSync(join(tmpdir(), `bench-${db}-`))
  tempDirs.push(dataDir)
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    APP_ENV: 'local',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    SMTP_URL: smtpUrl,
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    INVITE_EMAILS_PER_HOUR: '100000',
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : {})
  }
  // The first admin as an operator makes it (compiled create-admin; before the service holds
  // the embedded database), then signed up over HTTP for a real session cookie.
  const admin = `admin-${db}@bench.test`
  const made = execFileSync(process.execPath, [join(projectRoot, 'dist/scripts/create-admin.js'), '--email', admin, '--workspace', `Bench ${db}`], { cwd: projectRoot, env: { ...env, SMTP_URL: '' }, encoding: 'utf8' })
  const token = new URL(made.trim().split('\n').pop() ?? '').searchParams.get('token') ?? ''
  const args = [...(profileDir !== null ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `service-${db}.cpuprofile`] : []), '--enable-source-maps', join(projectRoot, 'dist/src/server.js')]
  const proc = start(process.execPath, args, env)
  await waitFor(`the ${db} service`, async () => (await httpJson(port, 'GET', '/api/health')).status === 200)
  const signup = await httpJson(port, 'POST', '/api/auth/signup', { token, name: 'Bench Admin' })
  if (signup.status !== 201) throw new Error(`signup on ${db} answered ${signup.status}: ${signup.body}`)
  const cookie = (signup.setCookie.find(c => c.startsWith('service_session=')) ?? '').split(';')[0] as string
  return { name: db, db, port, proc, cookie }
}

interface Scenario {
  name: string
  group: 'baseline' | 'pglite' | 'postgres'
  expect: number
  pid: () => number
  run: (seconds: number) => Promise<{ rps: number, p50: number, p99: number, total: number, unexpected: number }>
}

interface Round { rps: number, p50: number, p99: number, peakRssMb: number, total: number, unexpected: number }

async function measure (s: Scenario, seconds: number): Promise<Round> {
  let peak = 0
  const timer = setInterval(() => { peak = Math.max(peak, rssMb(s.pid())) }, 100)
  try {
    const r = await s.run(seconds)
    peak = Math.max(peak, rssMb(s.pid()))
    return { ...r, peakRssMb: peak }
  } finally {
    clearInterval(timer)
  }
}

function cannon (port: number, expect: number, connections: number, req: AutocannonRequest) {
  return async (seconds: number) => {
    const r = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, requests: [req] })
    const ok = r.statusCodeStats?.[String(expect)]?.count ?? 0
    const all = Object.values(r.statusCodeStats ?? {}).reduce((a, b) => a + b.count, 0)
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, unexpected: all - ok + r.errors + r.timeouts }
  }
}

async function main (): Promise<void> {
  const rounds = Number(values.rounds)
  const seconds = Number(values.duration)
  const warmup = Number(values.warmup)
  const connections = Number(values.connections)

  if (!values['no-build']) {
    process.stdout.write('bench: npm run build\n')
    execFileSync('npm', ['run', '--silent', 'build'], { cwd: projectRoot, stdio: 'inherit' })
  }
  if (!existsSync(join(projectRoot, 'dist/src/server.js'))) throw new Error('dist/src/server.js is missing: run npm run build')

  // The SMTP peer: accepts and discards, like a relay that answers quickly.
  let received = 0
  const smtp = new SMTPServer({ authOptional: true, disabledCommands: ['STARTTLS'], logger: false, onData (stream, _s, cb) { stream.on('data', () => {}); stream.on('end', () => { received++; cb() }) } })
  await new Promise<void>(resolve => { smtp.listen(0, '127.0.0.1', () => { resolve() }) })
  const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as { port: number }).port}`

  // A throwaway PostgreSQL database, dropped at the end whatever happens.
  let pgDb: string | null = null
  let pgUrl: string | null = null
  if (!values['no-postgres']) {
    pgDb = `ws_bench_${Date.now()}_${process.pid}`
    const c = new pg.Client({ connectionString: values['pg-url'] })
    await c.connect()
    await c.query(`CREATE DATABASE ${pgDb}`)
    await c.end()
    const u = new URL(values['pg-url'])
    u.pathname = `/${pgDb}`
    pgUrl = u.toString()
  }
  const profileDir = values.profile ? join(projectRoot, 'bench') : null
  const workers: ChildProcess[] = []
  try {
    const barePort = await freePort()
    const bare = start(process.execPath, ['--input-type=module', '-e', BARE], { PATH: process.env.PATH, PORT: String(barePort) })
    await waitFor('bare Fastify', async () => (await httpJson(barePort, 'GET', '/')).status === 200)

    const services: Service[] = [await startService('pglite', smtpUrl, null, profileDir)]
    if (pgUrl !== null) services.push(await startService('postgres', smtpUrl, pgUrl, profileDir))

    // Raw-work workers: this file forked, one per database, kept alive across rounds.
    const raws = new Map<string, ChildProcess>()
    for (const svc of services) {
      let where: string[]
      if (svc.db === 'postgres' && pgUrl !== null) {
        where = ['--raw-url', pgUrl]
      } else {
        const dir = mkdtempSync(join(tmpdir(), 'bench-raw-'))
        tempDirs.push(dir)
        execFileSync(process.execPath, [join(projectRoot, 'dist/scripts/migrate.js')], { cwd: projectRoot, env: { PATH: process.env.PATH, DATA_DIR: dir, SESSION_SECRET: randomBytes(32).toString('base64url'), LOG_LEVEL: 'warn' }, stdio: 'ignore' })
        where = ['--raw-dir', join(dir)]
      }
      const w = fork(fileURLToPath(import.meta.url), ['--raw-worker', svc.db, '--raw-smtp', smtpUrl, ...where], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
      // A fork inherits this process's CPU; the raw-work loop runs where the service runs.
      if (PIN && w.pid !== undefined) execFileSync('taskset', ['-a', '-cp', SERVER_CPU, String(w.pid)], { stdio: 'ignore' })
      workers.push(w)
      children.push(w)
      await new Promise<void>((resolve, reject) => {
        w.once('message', () => { resolve() })
        w.once('exit', code => { reject(new Error(`raw worker (${svc.db}) exited ${String(code)}`)) })
      })
      raws.set(svc.db, w)
    }
    const rawRun = (w: ChildProcess) => async (secs: number) => await new Promise<{ rps: number, p50: number, p99: number, total: number, unexpected: number }>(resolve => {
      w.once('message', (m: { rps: number, p50: number, p99: number, total: number, errors: number }) => { resolve({ rps: m.rps, p50: m.p50, p99: m.p99, total: m.total, unexpected: m.errors }) })
      w.send({ type: 'run', durationMs: secs * 1000, connections })
    })

    let n = 0
    const scenarios: Scenario[] = [{ name: 'bare Fastify GET /', group: 'baseline', expect: 200, pid: () => bare.child.pid ?? 0, run: cannon(barePort, 200, connections, { method: 'GET', path: '/' }) }]
    for (const svc of services) {
      const pid = () => svc.proc.child.pid ?? 0
      const json = { 'content-type': 'application/json' }
      scenarios.push(
        { name: 'GET /api/health', group: svc.db, expect: 200, pid, run: cannon(svc.port, 200, connections, { method: 'GET', path: '/api/health' }) },
        { name: '401 invite, no cookie', group: svc.db, expect: 401, pid, run: cannon(svc.port, 401, connections, { method: 'POST', path: '/api/users/invite', headers: json, body: '{"email":"a@bench.test","role":"member"}' }) },
        { name: '400 invite, invalid body', group: svc.db, expect: 400, pid, run: cannon(svc.port, 400, connections, { method: 'POST', path: '/api/users/invite', headers: { ...json, cookie: svc.cookie }, body: '{"email":"not-an-email","role":"owner","extra":1}' }) },
        {
          name: 'invite (fallback, SMTP)',
          group: svc.db,
          expect: 200,
          pid,
          run: cannon(svc.port, 200, connections, {
            method: 'POST',
            path: '/api/users/invite',
            headers: { ...json, cookie: svc.cookie },
            // A unique address per request: every one is a new invitation with its e-mail.
            setupRequest: req => ({ ...req, body: JSON.stringify({ email: `b${Date.now()}-${++n}@bench.test`, role: 'member' }) })
          })
        },
        { name: 'raw work of an invite', group: svc.db, expect: 200, pid: () => raws.get(svc.db)?.pid ?? 0, run: rawRun(raws.get(svc.db) as ChildProcess) }
      )
    }

    // --only <regex>: a subset (e.g. to profile one path); the bare baseline always runs.
    if (values.only !== undefined) {
      const re = new RegExp(values.only, 'i')
      scenarios.splice(0, scenarios.length, ...scenarios.filter(s => s.group === 'baseline' || re.test(`${s.group} ${s.name}`)))
    }
    const results = new Map<Scenario, Round[]>(scenarios.map(s => [s, []]))
    process.stdout.write(`bench: ${scenarios.length} scenarios × ${rounds} rounds × ${seconds} s, ${connections} connections (warm-up ${warmup} s each)\n`)
    for (const s of scenarios) await s.run(warmup)
    for (let r = 1; r <= rounds; r++) {
      for (const s of scenarios) {
        const m = await measure(s, seconds)
        results.get(s)?.push(m)
        process.stdout.write(`  round ${r}: ${s.group.padEnd(8)} ${s.name.padEnd(26)} ${m.rps.toFixed(0).padStart(7)} req/s  p50 ${m.p50.toFixed(1)} ms  p99 ${m.p99.toFixed(1)} ms  rss ${m.peakRssMb.toFixed(0)} MB${m.unexpected > 0 ? `  (${m.unexpected} unexpected)` : ''}\n`)
      }
    }

    // Summary: medians over rounds; peak RSS is the highest seen in any round.
    const summary = scenarios.map(s => {
      const rs = results.get(s) ?? []
      return {
        scenario: s.name,
        group: s.group,
        rps: median(rs.map(x => x.rps)),
        p50Ms: median(rs.map(x => x.p50)),
        p99Ms: median(rs.map(x => x.p99)),
        peakRssMb: Math.max(...rs.map(x => x.peakRssMb)),
        requests: rs.reduce((a, x) => a + x.total, 0),
        unexpected: rs.reduce((a, x) => a + x.unexpected, 0),
        rounds: rs.map(x => Math.round(x.rps))
      }
    })
    // Ratios are paired by round (same minute, same machine load) and the median taken: the
    // machine's drift between rounds cancels out of each pair.
    const bareRounds = results.get(scenarios[0] as Scenario) ?? []
    const roundsOf = (group: string, name: string) => results.get(scenarios.find(s => s.group === group && s.name === name) as Scenario) ?? []
    const pairedRatio = (a: Round[], b: Round[]): number | null => {
      const rs = a.map((x, i) => (b[i]?.rps ?? 0) > 0 ? x.rps / (b[i] as Round).rps : NaN).filter(Number.isFinite)
      return rs.length > 0 ? median(rs) : null
    }
    const rows = summary.map(x => {
      const own = roundsOf(x.group, x.scenario)
      if (x.scenario === 'invite (fallback, SMTP)') return { ...x, ratio: pairedRatio(own, roundsOf(x.group, 'raw work of an invite')), ratioTo: 'raw work' }
      if (x.group === 'baseline' || x.scenario === 'raw work of an invite') return { ...x, ratio: null, ratioTo: null }
      return { ...x, ratio: pairedRatio(own, bareRounds), ratioTo: 'bare Fastify' }
    })
    const targets = [
      ...services.map(s => ({ target: `health ≥ 0.8× bare Fastify (${s.db})`, value: rows.find(r => r.group === s.db && r.scenario === 'GET /api/health')?.ratio ?? NaN, min: 0.8 })),
      ...services.flatMap(s => ['401 invite, no cookie', '400 invite, invalid body'].map(n => ({ target: `${n.slice(0, 3)} path ≥ 0.5× bare Fastify (${s.db})`, value: rows.find(r => r.group === s.db && r.scenario === n)?.ratio ?? NaN, min: 0.5 }))),
      ...services.map(s => ({ target: `invite ≥ 0.7× raw work (${s.db})`, value: rows.find(r => r.group === s.db && r.scenario === 'invite (fallback, SMTP)')?.ratio ?? NaN, min: 0.7 })),
      ...services.filter(s => s.db === 'postgres').map(() => ({ target: 'peak RSS on PostgreSQL under load ≤ 150 MB', value: Math.max(...rows.filter(r => r.group === 'postgres' && r.scenario !== 'raw work of an invite').map(r => r.peakRssMb)), max: 150 }))
    ].map(t => ({ ...t, met: 'max' in t ? t.value <= (t.max as number) : t.value >= (t as { min: number }).min }))

    const pad = (s: string, n: number) => s.padEnd(n)
    const lines = [
      '',
      `${pad('group', 9)} ${pad('scenario', 27)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'peak RSS'.padStart(9)} ${'ratio'.padStart(7)}  to`,
      ...rows.map(r => `${pad(r.group, 9)} ${pad(r.scenario, 27)} ${r.rps.toFixed(0).padStart(8)} ${r.p50Ms.toFixed(1).padStart(7)} ${r.p99Ms.toFixed(1).padStart(7)} ${(r.peakRssMb.toFixed(0) + ' MB').padStart(9)} ${(r.ratio !== null ? r.ratio.toFixed(2) + '×' : '').padStart(7)}  ${r.ratioTo ?? ''}${r.unexpected > 0 ? `  (${r.unexpected} unexpected answers)` : ''}`),
      '',
      ...targets.map(t => `${t.met ? 'MET ' : 'MISS'}  ${t.target}: ${Number.isFinite(t.value) ? t.value.toFixed(2) : 'n/a'}`),
      `e-mails received by the SMTP peer: ${received}`
    ]
    process.stdout.write(lines.join('\n') + '\n')

    const out = {
      generatedAt: new Date().toISOString(),
      machine: { node: process.version, cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', memoryGb: Math.round(totalmem() / 2 ** 30), loadAverageAtEnd: loadavg().map(x => Number(x.toFixed(2))) },
      params: { rounds, durationSeconds: seconds, warmupSeconds: warmup, connections, pinnedCpus: PIN ? { servers: Number(SERVER_CPU), loadGenerator: LOAD_CPU } : null, service: 'node --enable-source-maps dist/src/server.js, LOG_LEVEL=warn' },
      scenarios: rows.map(r => ({ ...r, rps: Math.round(r.rps), p50Ms: Number(r.p50Ms.toFixed(2)), p99Ms: Number(r.p99Ms.toFixed(2)), peakRssMb: Number(r.peakRssMb.toFixed(1)), ratio: r.ratio !== null ? Number(r.ratio.toFixed(3)) : null })),
      targets: targets.map(t => ({ ...t, value: Number(t.value.toFixed(3)) })),
      emailsReceived: received
    }
    mkdirSync(join(values.out, '..'), { recursive: true })
    writeFileSync(values.out, JSON.stringify(out, null, 2) + '\n')
    process.stdout.write(`bench: wrote ${relative(projectRoot, values.out)}\n`)

    for (const w of workers) w.send({ type: 'stop' })
    await stop(bare.child)
    for (const s of services) await stop(s.proc.child)
    if (profileDir !== null) {
      for (const f of readdirSync(profileDir).filter(f => /^service-.*\.cpuprofile$/.test(f))) process.stdout.write('\n' + analyzeProfile(join(profileDir, f)) + '\n')
    }
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    await new Promise<void>(resolve => { smtp.close(() => { resolve() }) })
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
    if (pgDb !== null) {
      const c = new pg.Client({ connectionString: values['pg-url'] })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${pgDb} WITH (FORCE)`)
      await c.end()
    }
  }
}

if (values.analyze !== undefined) {
  process.stdout.write(analyzeProfile(values.analyze) + '\n')
} else if (values['raw-worker'] !== undefined) {
  await rawWorker(values['raw-worker'] === 'postgres' ? 'postgres' : 'pglite', values['raw-url'] ?? null, values['raw-dir'] ?? null, values['raw-smtp'] ?? '')
} else {
  await main()
}
