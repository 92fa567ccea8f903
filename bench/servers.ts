import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import pg from 'pg'
import { freePort } from '../scripts/lib/free-port.js'
import { startCommand } from '../scripts/lib/start-command.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { projectRoot } from '../src/paths.js'
import type { Measured, Pinning } from './load.js'
import { apiKeyScopes } from '../src/generated/api-key-scopes.js'

// The processes measured: the service as `npm start` runs it (compiled, LOG_LEVEL=warn), a bare
// Fastify hello-world, and the raw-work worker (bench/raw-worker.ts). Every child and temporary
// directory is recorded here, so `cleanUp` leaves nothing behind whatever failed.

type DbKind = 'pglite' | 'postgres'
interface Proc { child: ChildProcess, output: () => string }
export interface Service {
  db: DbKind
  port: number
  proc: Proc
  cookie: string
  apiKey: string
  /** The bench admin startService made (its address has the port and a serial: unique per server). */
  adminEmail: string
}
/** The frameworks of the hand-written baselines, each a script of its own doing the same work. */
export const FRAMEWORKS = ['Fastify', 'Hono', 'Express'] as const
export type Framework = typeof FRAMEWORKS[number]
// As URLs of this folder, which knip follows to them (they are forked, never imported).
const HAND_WRITTEN_SCRIPT: Record<Framework, URL> = {
  Fastify: new URL('./hand-written.ts', import.meta.url),
  Hono: new URL('./hand-written-hono.ts', import.meta.url),
  Express: new URL('./hand-written-express.ts', import.meta.url)
}
/** A hand-written baseline (bench/hand-written*.ts) on the same database kind. */
export interface HandWritten {
  db: DbKind
  framework: Framework
  port: number
  child: ChildProcess
  cookie: string
  apiKey: string
}
export interface RawWorker { child: ChildProcess, run: (seconds: number) => Promise<Measured> }

const children: ChildProcess[] = []
const tempDirs: string[] = []

/** The compiled script `name` (dist/scripts): run as an operator would, by `npm run build`'s output. */
const compiled = (name: string): string => join(projectRoot, `dist/scripts/${name}.js`)
const newSecret = (): string => randomBytes(32).toString('base64url')

export function tempDir (prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

let pgliteTemplate: string | null = null

/**
 * A data directory of its own for a server on PGlite, its embedded database made and migrated: a
 * copy of one the compiled migrate script made (PGlite's initdb, then the migrations) the first
 * time one was asked for. The same files initdb and the migrations would give each server, made
 * once a run instead of once a server (≈ 4 CPU-s each: three or more a launch).
 */
function pgliteDataDir (prefix: string): string {
  if (pgliteTemplate === null) {
    const template = tempDir('bench-template-')
    const env = { PATH: process.env.PATH, DATA_DIR: template, SESSION_SECRET: newSecret(), LOG_LEVEL: 'warn' }
    execFileSync(process.execPath, [compiled('migrate')], { cwd: projectRoot, env, stdio: 'ignore' })
    pgliteTemplate = template
  }
  const dir = tempDir(prefix)
  cpSync(join(pgliteTemplate, 'pglite'), join(dir, 'pglite'), { recursive: true })
  return dir
}

export interface Throwaway { url: string, drop: () => Promise<void> }
let databasesMade = 0
/** The throwaway databases made and not yet dropped, by name: what a signal still has to drop. */
const undropped = new Map<string, () => Promise<void>>()
/** How long an interrupted bench waits for its databases to be dropped before it exits anyway. */
const DROP_ON_SIGNAL_MS = 10_000

/**
 * Ctrl-C or a SIGTERM in the middle of a run: the `finally` blocks that drop the databases never
 * run, so a signal kills the children, drops what is left and exits 130 / 143 (128 + the signal).
 */
let signalsHeard = false
function dropOnSignal (): void {
  if (signalsHeard) return
  signalsHeard = true
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.once(signal, () => {
      cleanUp()
      process.stderr.write(`bench: ${signal}: dropping ${undropped.size} throwaway database(s)\n`)
      const drops = Promise.allSettled([...undropped.values()].map(async drop => { await drop() }))
      const late = new Promise(resolve => setTimeout(resolve, DROP_ON_SIGNAL_MS))
      Promise.race([drops, late]).then(() => { process.exit(code) }, () => { process.exit(code) })
    })
  }
}

/** A throwaway PostgreSQL database `<prefix>_<time>_<pid>_<n>` on `serverUrl`; `drop` removes it. */
export async function throwawayDatabase (serverUrl: string, prefix: string): Promise<Throwaway> {
  const name = `${prefix}_${Date.now()}_${process.pid}_${++databasesMade}`
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: serverUrl })
    await c.connect()
    try { await c.query(sql) } finally { await c.end() }
  }
  await admin(`CREATE DATABASE ${name}`)
  const drop = async (): Promise<void> => {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    undropped.delete(name)
  }
  dropOnSignal()
  undropped.set(name, drop)
  const u = new URL(serverUrl)
  u.pathname = `/${name}`
  return { url: u.toString(), drop }
}

/** Kills what is still running and removes the temporary directories. */
export function cleanUp (): void {
  for (const c of children) stopping.add(c)
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
}

interface Answer { status: number, body: string, setCookie: string[] }

export async function httpJson (
  port: number, method: string, path: string, body?: unknown, cookie?: string
): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const headers = {
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(cookie !== undefined ? { cookie } : {})
    }
    const req = httpRequest({ host: '127.0.0.1', port, method, path, agent: false, headers }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const setCookie = [res.headers['set-cookie'] ?? []].flat()
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString(), setCookie })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/**
 * The environment of every measured server: the service's own settings as an operator would run
 * it, a log level that writes nothing per request, no e-mail budget in the way, and an API key
 * limit of one message a minute (the 429 scenario: every request past the first is refused).
 */
export function serviceEnv (
  dataDir: string, port: number, smtpUrl: string, databaseUrl: string | null, extraEnv: Record<string, string>
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    APP_ENV: 'local',
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    DATA_DIR: dataDir,
    SMTP_URL: smtpUrl,
    SESSION_SECRET: newSecret(),
    INVITE_EMAILS_PER_HOUR: '100000',
    API_KEY_RATE_LIMIT_PER_MINUTE: '1',
    // The REST budget per key raised for the run: the key-authenticated list page measures the path, not the limit.
    API_KEY_REST_RATE_LIMIT_PER_MINUTE: '1000000',
    // Metrics collected as in production (their listener on a port of its own); `--service-env
    // METRICS_PORT=` (empty: unset) measures without.
    METRICS_PORT: '0',
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : {}),
    ...extraEnv
  }
  for (const [k, v] of Object.entries(env)) if (v === '') delete env[k]
  return env
}

/** Polls `ready` until it answers true (a server's port is not an event we can await). */
async function waitUntil (what: string, ready: () => Promise<boolean>, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await ready().catch(() => false)) return
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  throw new Error(`timed out waiting for ${what}`)
}

function start (pin: Pinning, cmd: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const [file, argv] = pin.command(cmd, args)
  const child = spawn(file, argv, { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let out = ''
  child.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  // A server that dies mid-run says so at once, with its last lines (its rows would read 0 req/s).
  child.once('exit', (code, signal) => {
    if (stopping.has(child)) return
    const tail = out.trimEnd().split('\n').slice(-15).join('\n')
    process.stderr.write(`bench: ${args.at(-1) ?? cmd} exited (${String(code ?? signal)}):\n${tail}\n`)
  })
  return { child, output: () => out }
}

/** Children being stopped on purpose: their exit is not news. */
const stopping = new Set<ChildProcess>()

export async function stop (child: ChildProcess): Promise<void> {
  stopping.add(child)
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>(resolve => { child.once('exit', () => { resolve() }) })
  child.kill('SIGTERM')
  await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 15_000))])
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

/**
 * GET /api/health as bare Fastify answers it (issue 42): the service's body — the same fields,
 * serialized by Fastify against a response schema of the same shape — and the service's JSON
 * headers (the API kind of src/plugins/helmet.ts: Cache-Control no-store, CSP, nosniff,
 * X-Frame-Options, CORP, API-Version, computed by the service's own function), set in one call.
 * What the service does beyond this — its hooks, its database ping, its contract's routing — is
 * what health's ratio against it measures. `dist` is the compiled service (npm run build).
 */
const BARE_HEALTH = (dist: string): string => `
const { securityHeaders } = await import('${dist}/src/plugins/helmet.js')
const { readFileSync } = await import('node:fs')
const version = JSON.parse(readFileSync(new URL('../package.json', '${dist}/'), 'utf8')).version
const headers = securityHeaders({ publicUrl: 'http://127.0.0.1' }, 'api', false, { 'api-version': version })
const status = { type: 'string' }
const dateTime = { type: 'string', format: 'date-time' }
const database = { type: 'object', properties: { status, kind: status, latencyMs: { type: 'number' } } }
const schema = {
  response: {
    200: {
      type: 'object',
      properties: {
        status, version: status,
        checks: {
          type: 'object',
          properties: { database, mail: { type: 'object', properties: { status, since: dateTime } } }
        }
      }
    }
  }
}
const ping = { status: 'ok', kind: 'pglite', latencyMs: 0.12 }
// The service's body has its mail relay's check when it has a relay (the bench's SMTP peer): so this one.
const mail = process.env.BARE_MAIL === '1' ? { status: 'ok', since: new Date().toISOString() } : undefined
const health = () => ({ status: 'ok', version, checks: { database: ping, mail } })
app.get('/api/health', { schema }, async (_request, reply) => { reply.headers(headers); return health() })
`

/** Bare Fastify answering GET /api/health (BARE_HEALTH) on PORT, as a script for `node --input-type=module -e`. */
export const BARE = `
import Fastify from 'fastify'
const app = Fastify({ logger: false })
${BARE_HEALTH(pathToFileURL(join(projectRoot, 'dist')).href)}
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
`
/** The bare baseline's route: the service's health, bare. */
export const BARE_PATH = '/api/health'

/** Bare Fastify answering GET /api/health as the service does (BARE): the baseline of the health, 401 and 400 paths. */
export async function startBare (pin: Pinning, profileDir: string | null): Promise<{ port: number, proc: Proc }> {
  const port = await freePort()
  // The services measured beside it have the bench's SMTP peer: their health has the relay's check.
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, PORT: String(port), BARE_MAIL: '1' }
  const proc = start(pin, process.execPath, [...profilerFlags(profileDir, env), '--input-type=module', '-e', BARE], env)
  await waitUntil('bare Fastify', async () => (await httpJson(port, 'GET', BARE_PATH)).status === 200)
  return { port, proc }
}

// The same bare health, served by a process that first built the service's app (compiled, on
// PGlite) and closed it: whether what the app's start leaves in a process (its code, its heap,
// V8's feedback) costs a request apart from anything the request does. Read its ratio with care:
// two launches of the same program differ in CPU per request (docs/performance.md, "Health
// against bare Fastify"); `--launches` evens that out.
const BARE_AFTER_APP = (dist: string): string => `
import Fastify from 'fastify'
const { loadConfig } = await import('${dist}/src/config.js')
const { prepareDataDir } = await import('${dist}/src/db/client.js')
const { buildApp } = await import('${dist}/src/app.js')
const config = loadConfig(process.env, { root: process.cwd() })
await prepareDataDir(config.dataDir)
const built = await buildApp({ config })
await built.ready()
await built.close()
const app = Fastify({ logger: false })
${BARE_HEALTH(dist)}
await app.listen({ port: Number(process.env.BARE_PORT), host: '127.0.0.1' })
process.on('SIGTERM', () => { app.close().then(() => process.exit(0)) })
`

/** `--costs`: bare Fastify in a process that built the service's app first (BARE_AFTER_APP). */
export async function startBareAfterApp (pin: Pinning, smtpUrl: string): Promise<{ port: number, proc: Proc }> {
  const port = await freePort()
  const dataDir = pgliteDataDir('bench-bare-after-app-')
  const env = { ...serviceEnv(dataDir, await freePort(), smtpUrl, null, {}), BARE_PORT: String(port), BARE_MAIL: '1' }
  const script = BARE_AFTER_APP(pathToFileURL(join(projectRoot, 'dist')).href)
  // Node's flags as the bare baseline's (none): the two differ by the app built first, nothing else.
  const proc = start(pin, process.execPath, ['--input-type=module', '-e', script], env)
  await waitUntil('bare Fastify after the app', async () => (await httpJson(port, 'GET', BARE_PATH)).status === 200)
  return { port, proc }
}

/** Services started by this process: with --launches, a port may come round again on one database. */
let servicesStarted = 0

/** The compiled service on PGlite (a data directory of its own) or PostgreSQL, with an admin's session cookie. */
export async function startService (
  pin: Pinning,
  db: DbKind,
  smtpUrl: string,
  databaseUrl: string | null,
  profileDir: string | null,
  extraEnv: Record<string, string> = {},
  invitations = 0,
  members = 0
): Promise<Service> {
  const dataDir = db === 'pglite' ? pgliteDataDir(`bench-${db}-`) : tempDir(`bench-${db}-`)
  const port = await freePort()
  const env = serviceEnv(dataDir, port, smtpUrl, databaseUrl, extraEnv)
  // The first admin as an operator makes it (compiled create-admin; before the service holds
  // the embedded database), then signed up over HTTP for a real session cookie.
  // Unique per server: on PostgreSQL the --costs variants share the database.
  const serial = ++servicesStarted
  const admin = `admin-${db}-${port}-${serial}@bench.test`
  const workspace = `Bench ${db} ${port} ${serial}`
  const createAdmin = [compiled('create-admin'), '--email', admin, '--workspace', workspace]
  const made = execFileSync(process.execPath, createAdmin, {
    cwd: projectRoot, env: { ...env, SMTP_URL: '' }, encoding: 'utf8'
  })
  const token = new URL(made.trim().split('\n').pop() ?? '').searchParams.get('token') ?? ''
  // The list page's workspace history, written before the service holds the embedded database.
  const seed = [...TSX, fileURLToPath(new URL('seed.ts', import.meta.url)), '--workspace', workspace]
  const counts = ['--invitations', String(invitations), '--members', String(members)]
  execFileSync(process.execPath, [...seed, ...counts], { cwd: projectRoot, env })
  const profile = profilerFlags(profileDir, env)
  // As `npm start` runs it: its node flags (the heap's cap among them) and its script.
  const { nodeFlags, script } = startCommand()
  const proc = start(pin, process.execPath, [...profile, ...nodeFlags, join(projectRoot, script)], env)
  await waitUntil(`the ${db} service`, async () => (await httpJson(port, 'GET', '/api/health')).status === 200)
  const signup = await httpJson(port, 'POST', '/api/auth/signup', { token, name: 'Bench Admin' })
  if (signup.status !== 201) throw new Error(`signup on ${db} answered ${signup.status}: ${signup.body}`)
  const cookie = (signup.setCookie.find(c => c.startsWith('service_session=')) ?? '').split(';')[0] as string
  const allScopes = apiKeyScopes.map(s => s.scope)
  const key = await httpJson(port, 'POST', '/api/api-keys', { name: 'bench', scopes: allScopes }, cookie)
  if (key.status !== 201) throw new Error(`an API key on ${db} answered ${key.status}: ${key.body}`)
  return { db, port, proc, cookie, adminEmail: admin, apiKey: (JSON.parse(key.body) as { secret: string }).secret }
}

const TSX = ['--import', 'tsx']

/** With a profile directory: the preload that profiles one round on SIGUSR2 (bench/cpu-profile-on-signal.mjs). */
function profilerFlags (profileDir: string | null, env: NodeJS.ProcessEnv): string[] {
  if (profileDir === null) return []
  env.BENCH_PROFILE_DIR = profileDir
  return ['--import', fileURLToPath(new URL('cpu-profile-on-signal.mjs', import.meta.url))]
}

/** Forks `script` (a bench/ module run by tsx, by name or URL) on the servers' CPU; resolves with its first message. */
async function forkReady<M> (
  pin: Pinning, script: string | URL, args: string[], env: NodeJS.ProcessEnv, what: string, execArgv: string[] = []
): Promise<{ child: ChildProcess, ready: M }> {
  const child = fork(fileURLToPath(new URL(script, import.meta.url)), args, {
    cwd: projectRoot, env, execArgv: [...TSX, ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  children.push(child)
  // A fork inherits this process's CPU; the servers run on theirs.
  if (child.pid !== undefined) pin.movePid(child.pid)
  const ready = await new Promise<M>((resolve, reject) => {
    child.once('message', m => { resolve(m as M) })
    child.once('exit', code => { reject(new Error(`${what} exited ${String(code)}`)) })
  })
  return { child, ready }
}

/**
 * A hand-written baseline on a database of the same kind (PGlite: a data directory of its own),
 * `framework`'s (bench/hand-written.ts on Fastify, -hono.ts, -express.ts; their shared start in
 * bench/hand-written-work.ts).
 */
export async function startHandWritten (
  pin: Pinning, db: DbKind, smtpUrl: string, databaseUrl: string | null,
  extraEnv: Record<string, string>, invitations: number, profileDir: string | null,
  framework: Framework = 'Fastify', flags: string[] = []
): Promise<HandWritten> {
  const port = await freePort()
  const prefix = `bench-hand-${framework.toLowerCase()}-${db}-`
  const dataDir = db === 'pglite' ? pgliteDataDir(prefix) : tempDir(prefix)
  const env = serviceEnv(dataDir, port, smtpUrl, databaseUrl, extraEnv)
  const args = ['--port', String(port), '--invitations', String(invitations), ...flags]
  // With npm start's node flags too: the same heap cap, so neither collects more often than the other.
  const execArgv = [...startCommand().nodeFlags, ...profilerFlags(profileDir, env)]
  const { child, ready } = await forkReady<{ cookie: string, apiKey: string }>(
    pin, HAND_WRITTEN_SCRIPT[framework], args, env, `hand-written ${framework} (${db})`, execArgv
  )
  return { db, framework, port, child, cookie: ready.cookie, apiKey: ready.apiKey }
}

/**
 * The raw-work worker for one database, kept alive across rounds, with a data directory of its own
 * (as the service has): PostgreSQL shares the service's database; PGlite lives in that directory,
 * made and migrated beforehand (pgliteDataDir, as the service's is). Its closed loop runs
 * `connections` invites at a time.
 */
export async function startRawWorker (
  pin: Pinning, db: DbKind, smtpUrl: string, databaseUrl: string | null, connections: number
): Promise<RawWorker> {
  const postgres = db === 'postgres' && databaseUrl !== null
  const dir = postgres ? tempDir('bench-raw-') : pgliteDataDir('bench-raw-')
  const where = ['--data-dir', dir, ...(postgres ? ['--database-url', databaseUrl] : [])]
  const args = ['--smtp', smtpUrl, ...where]
  const { child } = await forkReady(pin, 'raw-worker.ts', args, process.env, `raw worker (${db})`)
  const run = async (seconds: number): Promise<Measured> => await new Promise(resolve => {
    child.once('message', (m: { rps: number, p50: number, p99: number, total: number, errors: number }) => {
      resolve({ rps: m.rps, p50: m.p50, p99: m.p99, total: m.total, unexpected: m.errors })
    })
    child.send({ type: 'run', durationMs: seconds * 1000, connections })
  })
  return { child, run }
}
