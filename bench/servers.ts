import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { freePort } from '../scripts/lib/free-port.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { projectRoot } from '../src/paths.js'
import type { Measured, Pinning } from './load.js'

// The processes measured: the service as `npm start` runs it (compiled, LOG_LEVEL=warn), a bare
// Fastify hello-world, and the raw-work worker (bench/raw-worker.ts). Every child and temporary
// directory is recorded here, so `cleanUp` leaves nothing behind whatever failed.

type DbKind = 'pglite' | 'postgres'
interface Proc { child: ChildProcess, output: () => string }
export interface Service { db: DbKind, port: number, proc: Proc, cookie: string }
export interface RawWorker { child: ChildProcess, run: (seconds: number) => Promise<Measured> }

const children: ChildProcess[] = []
const tempDirs: string[] = []

/** The compiled script `name` (dist/scripts): run as an operator would, by `npm run build`'s output. */
const compiled = (name: string): string => join(projectRoot, `dist/scripts/${name}.js`)
const newSecret = (): string => randomBytes(32).toString('base64url')

function tempDir (prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

/** Kills what is still running and removes the temporary directories. */
export function cleanUp (): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true })
}

interface Answer { status: number, body: string, setCookie: string[] }

async function httpJson (port: number, method: string, path: string, body?: unknown): Promise<Answer> {
  const payload = body === undefined ? undefined : JSON.stringify(body)
  return await new Promise((resolve, reject) => {
    const headers = payload !== undefined ? { 'content-type': 'application/json' } : {}
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
  return { child, output: () => out }
}

export async function stop (child: ChildProcess): Promise<void> {
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

/** A bare Fastify hello-world on GET /: the baseline of the health, 401 and 400 paths. */
export async function startBare (pin: Pinning): Promise<{ port: number, proc: Proc }> {
  const port = await freePort()
  const env = { PATH: process.env.PATH, PORT: String(port) }
  const proc = start(pin, process.execPath, ['--input-type=module', '-e', BARE], env)
  await waitUntil('bare Fastify', async () => (await httpJson(port, 'GET', '/')).status === 200)
  return { port, proc }
}

/** The compiled service on PGlite (a data directory of its own) or PostgreSQL, with an admin's session cookie. */
export async function startService (
  pin: Pinning,
  db: DbKind,
  smtpUrl: string,
  databaseUrl: string | null,
  profileDir: string | null,
  extraEnv: Record<string, string> = {}
): Promise<Service> {
  const dataDir = tempDir(`bench-${db}-`)
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
    SESSION_SECRET: newSecret(),
    INVITE_EMAILS_PER_HOUR: '100000',
    ...(databaseUrl !== null ? { DATABASE_URL: databaseUrl } : {}),
    ...extraEnv
  }
  // The first admin as an operator makes it (compiled create-admin; before the service holds
  // the embedded database), then signed up over HTTP for a real session cookie.
  const admin = `admin-${db}@bench.test`
  const createAdmin = [compiled('create-admin'), '--email', admin, '--workspace', `Bench ${db}`]
  const made = execFileSync(process.execPath, createAdmin, {
    cwd: projectRoot, env: { ...env, SMTP_URL: '' }, encoding: 'utf8'
  })
  const token = new URL(made.trim().split('\n').pop() ?? '').searchParams.get('token') ?? ''
  const profile = profileDir !== null
    ? ['--cpu-prof', '--cpu-prof-dir', profileDir, '--cpu-prof-name', `service-${db}.cpuprofile`]
    : []
  const server = join(projectRoot, 'dist/src/server.js')
  const proc = start(pin, process.execPath, [...profile, '--enable-source-maps', server], env)
  await waitUntil(`the ${db} service`, async () => (await httpJson(port, 'GET', '/api/health')).status === 200)
  const signup = await httpJson(port, 'POST', '/api/auth/signup', { token, name: 'Bench Admin' })
  if (signup.status !== 201) throw new Error(`signup on ${db} answered ${signup.status}: ${signup.body}`)
  const cookie = (signup.setCookie.find(c => c.startsWith('service_session=')) ?? '').split(';')[0] as string
  return { db, port, proc, cookie }
}

/**
 * The raw-work worker for one database, kept alive across rounds, with a data directory of its own
 * (as the service has): PostgreSQL shares the service's database; PGlite lives in that directory,
 * initialised by another process (as the service's is by create-admin). Its closed loop runs
 * `connections` invites at a time.
 */
export async function startRawWorker (
  pin: Pinning, db: DbKind, smtpUrl: string, databaseUrl: string | null, connections: number
): Promise<RawWorker> {
  const dir = tempDir('bench-raw-')
  let where = ['--data-dir', dir]
  if (db === 'postgres' && databaseUrl !== null) {
    where = [...where, '--database-url', databaseUrl]
  } else {
    const env = { PATH: process.env.PATH, DATA_DIR: dir, SESSION_SECRET: newSecret(), LOG_LEVEL: 'warn' }
    execFileSync(process.execPath, [compiled('migrate')], { cwd: projectRoot, env, stdio: 'ignore' })
  }
  const worker = fileURLToPath(new URL('raw-worker.ts', import.meta.url))
  const child = fork(worker, ['--smtp', smtpUrl, ...where], {
    cwd: projectRoot, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  children.push(child)
  // A fork inherits this process's CPU; the raw-work loop runs where the service runs.
  if (child.pid !== undefined) pin.movePid(child.pid)
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => { resolve() })
    child.once('exit', code => { reject(new Error(`raw worker (${db}) exited ${String(code)}`)) })
  })
  const run = async (seconds: number): Promise<Measured> => await new Promise(resolve => {
    child.once('message', (m: { rps: number, p50: number, p99: number, total: number, errors: number }) => {
      resolve({ rps: m.rps, p50: m.p50, p99: m.p99, total: m.total, unexpected: m.errors })
    })
    child.send({ type: 'run', durationMs: seconds * 1000, connections })
  })
  return { child, run }
}
