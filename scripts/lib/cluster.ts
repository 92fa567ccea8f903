import { spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import pg from 'pg'
import { projectRoot } from '../../src/paths.js'
import { freePort } from './free-port.js'
import { nginxBinary, nginxPreamble } from './nginx.js'
import { startCommand } from './start-command.js'

// Several instances of the service on one PostgreSQL (+ Redis) behind the project's nginx, all on
// loopback: `npm run cluster` for trying it, and the rolling-restart test and soak. The layout is
// the one docs/operating.md recommends for a real deployment: each instance's listening socket
// held outside it (there by systemd's `workspace@.socket`, here by a thread of this process), so
// that a restart loses no connection the kernel had queued; nginx with upstream keep-alive
// shorter than the instances' drain.

/** nginx's idle keep-alive for upstream connections; each instance drains longer than this. */
const UPSTREAM_KEEPALIVE_S = 2
const DRAIN_MS = (UPSTREAM_KEEPALIVE_S + 1) * 1000

interface Instance {
  readonly port: number
  readonly process: ChildProcess | null
  /** Its log so far (JSON lines). */
  log(): string
  /** Starts it and resolves once GET /api/health answers 200. */
  start(): Promise<void>
  /** SIGTERM (it drains, then closes) and resolves with its exit code. */
  stop(): Promise<number | null>
}

export interface Cluster {
  /** The proxy's address: where clients go. */
  url: string
  instances: Instance[]
  /** Where nginx and the instances keep their files: removed by close() when startCluster made it. */
  dir: string
  close(): Promise<void>
}

export interface ClusterOptions {
  instances: number
  /** The proxy's port (0: any free one). */
  port?: number
  /** The instances' environment: DATABASE_URL (PostgreSQL) and SESSION_SECRET at least. */
  env: Record<string, string>
  /** Where nginx and each instance keep their files (a new temporary directory by default). */
  dir?: string
  /**
   * The loader that runs src/server.ts: tsx by default (`npm run cluster`); the tests pass their
   * own (test/helpers/ts-loader.mjs), whose output coverage maps back to the sources. Either way
   * the instances get `npm start`'s node flags too (its heap cap among them): the same process as
   * in production, but for the loader.
   */
  nodeArgs?: readonly string[]
  /**
   * Each instance listens on a socket of its own, closed with it, instead of one held across its
   * restarts: the layout before issue 45 item 9, which a restart under load loses requests with
   * (scripts/rolling-restart.ts --own-sockets shows it).
   */
  ownSockets?: boolean
}

// The keeper of the listening sockets: a thread that makes them, hands their descriptors over,
// then blocks for good, so that its event loop never accepts a connection on them — queued
// connections wait for whichever instance listens next, as under systemd's socket units. (A
// listening server on this process's own loop would accept them itself.)
const KEEPER = `
const { parentPort, workerData } = require('node:worker_threads')
const { createServer } = require('node:net')
const servers = Array.from({ length: workerData.count }, () => createServer())
let listening = 0
for (const server of servers) {
  server.listen({ port: 0, host: '127.0.0.1', backlog: 511 }, () => {
    if (++listening < servers.length) return
    // A server's descriptor has no public name in Node: _handle.fd is its libuv handle's.
    parentPort.postMessage(servers.map(s => ({ port: s.address().port, fd: s._handle.fd })))
    Atomics.wait(new Int32Array(workerData.release), 0, 0)
    for (const s of servers) s.close()
  })
}
`

export interface HeldSockets {
  /** Each socket's port, and its descriptor in this process (to pass to an instance: spawnService). */
  sockets: Array<{ port: number, fd: number }>
  /** Closes them (when nothing listens on them any more). */
  release(): Promise<void>
}

/** `count` listening sockets on 127.0.0.1, any free ports, held as systemd holds an instance's. */
export async function holdSockets (count: number): Promise<HeldSockets> {
  const release = new SharedArrayBuffer(4)
  const keeper = new Worker(KEEPER, { eval: true, workerData: { count, release } })
  const sockets = await new Promise<Array<{ port: number, fd: number }>>((resolve, reject) => {
    keeper.once('message', resolve).once('error', reject)
  })
  return {
    sockets,
    async release () {
      const exited = new Promise(resolve => keeper.once('exit', resolve))
      Atomics.store(new Int32Array(release), 0, 1)
      Atomics.notify(new Int32Array(release), 0)
      await exited
    }
  }
}

/**
 * The service (`node <nodeArgs> src/server.ts`, in the project) with `env`; on the held socket
 * `fd` when one is given, passed as systemd passes it: descriptor 3, LISTEN_FDS=1, and LISTEN_PID
 * naming the process itself (the shell's pid, which exec hands on to node). Its output is piped.
 */
export function spawnService (
  nodeArgs: readonly string[], env: Record<string, string>, fd: number | null
): ChildProcess {
  const node = [process.execPath, ...nodeArgs, 'src/server.ts']
  return fd === null
    ? spawn(node[0] as string, node.slice(1), { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('/bin/sh', ['-c', 'LISTEN_PID=$$ exec "$0" "$@"', ...node], {
      cwd: projectRoot, env: { ...env, LISTEN_FDS: '1' }, stdio: ['ignore', 'pipe', 'pipe', fd]
    })
}

/**
 * Resolves once GET /api/health at `url` answers 200. Each try is bounded: on a held socket a
 * connection is completed and queued while no process listens yet, and waits there unanswered.
 */
async function healthy (url: string, deadlineMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    if (!alive()) throw new Error(`the instance at ${url} exited while starting`)
    const ok = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(2000) })
      .then(r => r.status === 200, () => false)
    if (ok) return
    if (Date.now() > deadline) throw new Error(`no healthy answer from ${url} within ${deadlineMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

function instance (
  port: number, fd: number | null, env: Record<string, string>, dataDir: string, nodeArgs: readonly string[]
): Instance {
  let child: ChildProcess | null = null
  let out = ''
  return {
    port,
    get process () { return child },
    log: () => out,
    async start () {
      out = ''
      const c = spawnService(nodeArgs, {
        ...env,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATA_DIR: dataDir,
        TRUST_PROXY: '127.0.0.1',
        SHUTDOWN_DRAIN_MS: env.SHUTDOWN_DRAIN_MS ?? String(DRAIN_MS),
        LOG_FORMAT: 'json'
      }, fd)
      child = c
      c.stdout?.on('data', (b: Buffer) => { out += b.toString() })
      c.stderr?.on('data', (b: Buffer) => { out += b.toString() })
      await healthy(`http://127.0.0.1:${port}`, 180_000, () => c.exitCode === null && c.signalCode === null)
        .catch((err: Error) => { throw new Error(`${err.message}; its log ends:\n${out.slice(-2000)}`) })
    },
    async stop () {
      const c = child
      if (c === null || c.exitCode !== null || c.signalCode !== null) return c?.exitCode ?? null
      const exited = new Promise<number | null>(resolve => { c.once('exit', code => { resolve(code) }) })
      c.kill('SIGTERM')
      return await exited
    }
  }
}

/** The nginx.conf of docs/operating.md's deployment: nginx on `listen`, the instances on `upstreams`. */
export function nginxConf (prefix: string, listen: number, upstreams: number[]): string {
  return `${nginxPreamble(prefix)}
  upstream workspace {
    # To the instance with the fewest requests in progress: while one restarts, the requests that
    # wait in its socket's queue for the next process count against it, and the others go on to
    # the instances that answer.
    least_conn;
    # max_fails=0: no instance is ever taken out for a while. With max_fails=1, while one instance
    # restarted (its refusals count) a single 503 or error from another took that one out too,
    # and every request for fail_timeout was answered 502 "no live upstreams".
${upstreams.map(p => `    server 127.0.0.1:${p} max_fails=0;`).join('\n')}
    keepalive 32;
    # Shorter than each instance's drain (SHUTDOWN_DRAIN_MS): an idle connection is closed by
    # nginx, never by an instance that is stopping.
    keepalive_timeout ${UPSTREAM_KEEPALIVE_S}s;
  }
  server {
    listen 127.0.0.1:${listen};
    location / {
      proxy_pass http://workspace;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      # A refused connection (an instance whose socket is not held, stopped) goes to the next
      # instance: no byte of the request was sent, so this holds for POST too. A draining
      # instance's health 503 is passed on for GET and HEAD.
      proxy_next_upstream error timeout http_503;
      proxy_next_upstream_tries ${upstreams.length};
      proxy_connect_timeout 2s;
      # Above an instance's restart (its drain, then the next process's start): a request queued in
      # its socket meanwhile waits for the next process.
      proxy_read_timeout 60s;
    }
  }
}
`
}

/** Starts the instances (one after the other: the first migrates), then nginx in front of them. */
export async function startCluster (opts: ClusterOptions): Promise<Cluster> {
  const nginx = nginxBinary()
  if (nginx === null) throw new Error('nginx is not installed (scripts/setup-nginx.sh installs Debian\'s)')
  const root = opts.dir ?? mkdtempSync(join(tmpdir(), 'ws-cluster-'))
  const held = opts.ownSockets === true ? null : await holdSockets(opts.instances)
  const sockets = held?.sockets ??
    await Promise.all(Array.from({ length: opts.instances }, async () => ({ port: await freePort(), fd: null })))
  const nodeArgs = [...startCommand().nodeFlags, ...(opts.nodeArgs ?? ['--import', 'tsx'])]
  const instances = sockets.map((s, i) => instance(s.port, s.fd, opts.env, join(root, `instance-${i + 1}`), nodeArgs))
  const prefix = join(root, 'nginx')
  for (const d of ['', 'tmp', 'tmp/body', 'tmp/proxy']) mkdirSync(join(prefix, d), { recursive: true, mode: 0o777 })
  const listen = opts.port !== undefined && opts.port !== 0 ? opts.port : await freePort()
  writeFileSync(join(prefix, 'nginx.conf'), nginxConf(prefix, listen, sockets.map(s => s.port)))
  let ngx: ChildProcess | null = null
  let closed: Promise<void> | null = null
  // Once, however often it is called (a test's teardown after its own close).
  const close = async (): Promise<void> => await (closed ??= (async () => {
    await Promise.all(instances.map(async i => await i.stop()))
    const n = ngx
    if (n !== null && n.exitCode === null && n.signalCode === null) {
      const exited = new Promise(resolve => { n.once('exit', resolve) })
      n.kill('SIGQUIT')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5000))])
      if (n.exitCode === null && n.signalCode === null) n.kill('SIGKILL')
    }
    await held?.release()
    // A directory of our own making goes with the cluster (nginx's temp files, the instances' logs).
    if (opts.dir === undefined) rmSync(root, { recursive: true, force: true })
  })())
  try {
    for (const i of instances) await i.start()
    const args = ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', join(prefix, 'nginx.conf'), '-g', 'daemon off;']
    const n = spawn(nginx, args, { stdio: ['ignore', 'ignore', 'pipe'] })
    ngx = n
    let err = ''
    n.stderr?.on('data', (b: Buffer) => { err += b.toString() })
    const url = `http://127.0.0.1:${listen}`
    await healthy(url, 15_000, () => {
      if (n.exitCode !== null) throw new Error(`nginx exited: ${err}`)
      return true
    })
    return { url, instances, dir: root, close }
  } catch (e) {
    await close()
    throw e
  }
}

// The load of the rolling-restart test and soak: what a restart must lose none of.

/** A database of its own on the PostgreSQL at `server` (the instances are separate processes). */
export async function throwawayDatabase (
  server: string, prefix: string
): Promise<{ url: string, drop(): Promise<void> }> {
  const admin = new pg.Client({ connectionString: server })
  await admin.connect()
  const name = `${prefix}_${randomBytes(5).toString('hex')}`
  await admin.query(`CREATE DATABASE ${name}`)
  const url = new URL(server)
  url.pathname = `/${name}`
  return {
    url: url.href,
    async drop () {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await admin.end()
    }
  }
}

/** The instances' environment under load: this process's own (but its loaders), limits out of the way. */
export function loadEnv (
  databaseUrl: string, proxyPort: number, extra: Record<string, string> = {}
): Record<string, string> {
  const { NODE_OPTIONS: _loaders, DATABASE_URL: _db, ...base } = process.env
  return {
    ...Object.fromEntries(Object.entries(base).filter((e): e is [string, string] => e[1] !== undefined)),
    DATABASE_URL: databaseUrl,
    SESSION_SECRET: randomBytes(32).toString('base64url'),
    PUBLIC_URL: `http://127.0.0.1:${proxyPort}`,
    INVITE_EMAILS_PER_HOUR: '100000',
    AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    LOG_LEVEL: 'info',
    METRICS_PORT: '',
    ...extra
  }
}

/** The first workspace and admin, through the proxy with the setup link an instance logged: its session cookie. */
export async function setUpWorkspace (cluster: Cluster, email: string): Promise<string> {
  const token = cluster.instances
    .map(i => /\/setup\?token=([A-Za-z0-9_-]+)/.exec(i.log())?.[1]).find(x => x !== undefined)
  if (token === undefined) throw new Error('no instance logged a setup link')
  const setup = await fetch(`${cluster.url}/api/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, workspaceName: 'Cluster', email })
  })
  if (setup.status !== 201) throw new Error(`setup through the proxy answered ${setup.status}: ${await setup.text()}`)
  return (setup.headers.get('set-cookie') ?? '').split(';')[0] as string
}

export interface LoadRequest { what: string, expect: number, send: () => Promise<Response> }

/**
 * Reads, writes (PATCH and POST: the methods nginx retries on no other instance once sent), a
 * public POST and health, as the admin whose `cookie` and `email` these are.
 */
export function loadRequests (url: string, cookie: string, email: string): LoadRequest[] {
  let n = 0
  const json = (method: string, body: unknown, auth = true): RequestInit => ({
    method,
    headers: { ...(auth ? { cookie } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(body)
  })
  const get = (path: string) => async () => await fetch(`${url}${path}`, { headers: { cookie } })
  return [
    { what: 'GET /api/users/me', expect: 200, send: get('/api/users/me') },
    {
      what: 'PATCH /api/workspace/settings',
      expect: 200,
      send: async () => await fetch(`${url}/api/workspace/settings`, json('PATCH', { name: `Cluster ${++n}` }))
    },
    {
      what: 'POST /api/users/invite',
      expect: 200,
      send: async () => await fetch(`${url}/api/users/invite`, json('POST', {
        email: `person-${++n}@cluster.test`, role: 'member'
      }))
    },
    {
      what: 'POST /api/auth/login-link',
      expect: 202,
      send: async () => await fetch(`${url}/api/auth/login-link`, json('POST', { email }, false))
    },
    { what: 'GET /api/invitations', expect: 200, send: get('/api/invitations?limit=5') },
    { what: 'GET /api/health', expect: 200, send: async () => await fetch(`${url}/api/health`) }
  ]
}

/** One answered (or failed) request: when it ended, how long it took, and what went wrong if anything. */
export interface Outcome { at: number, ms: number, what: string, failure: string | null }

/**
 * `connections` clients, each sending the requests in turn, one at a time, until `enough` says so
 * (asked after each request); every outcome, in the order they ended.
 */
export async function runLoad (
  requests: LoadRequest[], connections: number, enough: (outcomes: readonly Outcome[]) => boolean
): Promise<Outcome[]> {
  const outcomes: Outcome[] = []
  let stop = false
  const client = async (first: number): Promise<void> => {
    for (let k = first; !stop; k++) {
      const r = requests[k % requests.length] as LoadRequest
      const started = performance.now()
      let failure: string | null = null
      try {
        const res = await r.send()
        const body = await res.text()
        if (res.status !== r.expect) failure = `${res.status} ${body.slice(0, 120)}`
      } catch (err) {
        const cause = (err as Error & { cause?: Error & { code?: string } }).cause
        failure = `${(err as Error).message} (${cause?.code ?? ''} ${cause?.message ?? ''})`
      }
      outcomes.push({ at: Date.now(), ms: performance.now() - started, what: r.what, failure })
      if (enough(outcomes)) stop = true
    }
  }
  await Promise.all(Array.from({ length: connections }, async (_v, c) => { await client(c) }))
  return outcomes
}
