import { spawn, type ChildProcess } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { freePort } from './free-port.js'
import { nginxBinary, nginxPreamble } from './nginx.js'
import { startCommand } from './start-command.js'

// Several instances of the service on one PostgreSQL (+ Redis) behind the project's nginx, all on
// loopback: `npm run cluster` for trying it, and the rolling-restart test and bench. The nginx
// configuration is the one docs/operating.md recommends for a real deployment (upstream
// keep-alive shorter than the instances' drain, a refused connection passed to the next one).

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
  /** EXPERIMENT: restart one instance: 'signal' = SIGTERM alone; 'proxy' = down + reload first. */
  restart(i: number, how: 'signal' | 'proxy'): Promise<number | null>
  events: Array<{ at: number, what: string }>
  close(): Promise<void>
}

/** The processes whose parent is `pid`. */
function childrenOf (pid: number): number[] {
  const out: number[] = []
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(e))
    } catch {}
  }
  return out
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
}

async function healthy (url: string, deadlineMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + deadlineMs
  for (;;) {
    if (!alive()) throw new Error(`the instance at ${url} exited while starting`)
    const ok = await fetch(`${url}/api/health`).then(r => r.status === 200, () => false)
    if (ok) return
    if (Date.now() > deadline) throw new Error(`no healthy answer from ${url} within ${deadlineMs} ms`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

function instance (port: number, env: Record<string, string>, dataDir: string, nodeArgs: readonly string[]): Instance {
  let child: ChildProcess | null = null
  let out = ''
  return {
    port,
    get process () { return child },
    log: () => out,
    async start () {
      out = ''
      const c = spawn(process.execPath, [...nodeArgs, 'src/server.ts'], {
        cwd: projectRoot,
        env: {
          ...env,
          PORT: String(port),
          HOST: '127.0.0.1',
          DATA_DIR: dataDir,
          TRUST_PROXY: '127.0.0.1',
          SHUTDOWN_DRAIN_MS: env.SHUTDOWN_DRAIN_MS ?? String(DRAIN_MS),
          LOG_FORMAT: 'json'
        },
        stdio: ['ignore', 'pipe', 'pipe']
      })
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
export function nginxConf (prefix: string, listen: number, upstreams: number[], down: ReadonlySet<number> = new Set()): string {
  return `${nginxPreamble(prefix)}
  upstream workspace {
    # max_fails=0: no instance is ever taken out for a while. With max_fails=1, while one instance
    # restarted (its refusals count) a single 503 or error from another took that one out too,
    # and every request for fail_timeout was answered 502 "no live upstreams". A stopped instance
    # costs a refused connection, then the request goes on to the next.
${upstreams.map(p => `    server 127.0.0.1:${p} max_fails=0${down.has(p) ? ' down' : ''};`).join('\n')}
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
      # A refused connection (an instance stopped or starting) goes to the next instance: no
      # byte of the request was sent, so this holds for POST too. A draining instance's health
      # 503 is passed on for GET and HEAD.
      proxy_next_upstream error timeout http_503;
      proxy_next_upstream_tries ${upstreams.length};
      proxy_connect_timeout 2s;
      proxy_read_timeout 30s;
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
  const ports = await Promise.all(Array.from({ length: opts.instances }, async () => await freePort()))
  const nodeArgs = [...startCommand().nodeFlags, ...(opts.nodeArgs ?? ['--import', 'tsx'])]
  const instances = ports.map((p, i) => instance(p, opts.env, join(root, `instance-${i + 1}`), nodeArgs))
  const prefix = join(root, 'nginx')
  for (const d of ['', 'tmp', 'tmp/body', 'tmp/proxy']) mkdirSync(join(prefix, d), { recursive: true, mode: 0o777 })
  const listen = opts.port !== undefined && opts.port !== 0 ? opts.port : await freePort()
  writeFileSync(join(prefix, 'nginx.conf'), nginxConf(prefix, listen, ports))
  let ngx: ChildProcess | null = null
  const close = async (): Promise<void> => {
    await Promise.all(instances.map(async i => await i.stop()))
    const n = ngx
    if (n !== null && n.exitCode === null && n.signalCode === null) {
      const exited = new Promise(resolve => { n.once('exit', resolve) })
      n.kill('SIGQUIT')
      await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5000))])
      if (n.exitCode === null && n.signalCode === null) n.kill('SIGKILL')
    }
    // A directory of our own making goes with the cluster (nginx's temp files, the instances' logs).
    if (opts.dir === undefined) rmSync(root, { recursive: true, force: true })
  }
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
    const down = new Set<number>()
    const reload = async (): Promise<void> => {
      writeFileSync(join(prefix, 'nginx.conf'), nginxConf(prefix, listen, ports, down))
      const test = spawnSync(nginx, [...args.slice(0, 6), '-t', '-q'], { encoding: 'utf8' })
      if (test.status !== 0) throw new Error(`nginx -t: ${test.stderr}`)
      const old = childrenOf(n.pid as number)
      n.kill('SIGHUP')
      const gone = (p: number): boolean => { try { process.kill(p, 0); return false } catch { return true } }
      while (!old.every(gone)) await new Promise(resolve => setTimeout(resolve, 50))
    }
    const events: Array<{ at: number, what: string }> = []
    const restart = async (i: number, how: 'signal' | 'proxy'): Promise<number | null> => {
      const instance = instances[i] as Instance
      const p = instance.port
      if (how === 'proxy') { events.push({ at: Date.now(), what: `reload ${p} down` }); down.add(instance.port); await reload(); events.push({ at: Date.now(), what: `old workers gone ${p} down` }) }
      events.push({ at: Date.now(), what: `SIGTERM ${p}` })
      const code = await instance.stop()
      for (const line of instance.log().split('\n')) {
        if (line.includes('drained: no longer listening')) events.push({ at: (JSON.parse(line) as { time: number }).time, what: `listener closed ${p}` })
      }
      events.push({ at: Date.now(), what: `exited ${p}` })
      await instance.start()
      events.push({ at: Date.now(), what: `healthy ${p}` })
      if (how === 'proxy') { events.push({ at: Date.now(), what: `reload ${p} up` }); down.delete(instance.port); await reload(); events.push({ at: Date.now(), what: `old workers gone ${p} up` }) }
      return code
    }
    return { url, instances, dir: root, close, restart, events }
  } catch (e) {
    await close()
    throw e
  }
}
