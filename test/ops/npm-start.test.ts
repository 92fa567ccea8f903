import t, { type Test } from 'tap'
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { seededDataDir } from '../helpers/build.js'
import { until } from '../helpers/service-process.js'

// A supervisor stops `npm start` by signalling npm: Docker's `docker stop` and a plain
// `kill <pid>` send SIGTERM to the npm process alone; Ctrl-C at a terminal (and systemd's default
// KillMode=control-group) sends the signal to every process of the group at once. Either way the
// service drains and stops as `node dist/src/server.js` does on the same signal, npm exits 0, and
// nothing is left holding the port or the embedded database. A real `npm start` here (its
// prestart build included: after the first start it finds nothing to do).

// The first start may compile the whole project (tsc -b) on a loaded machine.
t.setTimeout(290_000)

const DRAIN_MS = 1500

interface Started { npm: ChildProcess, port: number, dir: string, out: () => string, exited: Promise<number | null> }

async function npmStart (t: Test): Promise<Started> {
  const dir = await seededDataDir(t, 'ws-npm-start-')
  const port = await freePort()
  // The service as a person starts it: without the test runner's loaders (NODE_OPTIONS) and peers.
  const { DATABASE_URL: _db, REDIS_URL: _redis, NODE_OPTIONS: _loaders, ...env } = process.env
  // Its own process group (detached), so that a signal can go to the group as a terminal sends it.
  const npm = spawn('npm', ['start'], {
    cwd: projectRoot,
    detached: true,
    env: {
      ...env,
      PORT: String(port),
      DATA_DIR: dir,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      METRICS_PORT: '',
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS)
    },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let out = ''
  npm.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  npm.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  const exited = new Promise<number | null>(resolve => {
    npm.once('exit', (code, signal) => { resolve(signal !== null ? 128 + signalNumber(signal) : code) })
  })
  // Whatever is left of this start (npm, a shell, the server) is killed when the test ends.
  t.teardown(() => { try { process.kill(-(npm.pid as number), 'SIGKILL') } catch {} })
  await until('npm start', async () => {
    if (npm.exitCode !== null) throw new Error(`npm start exited ${npm.exitCode}: ${out}`)
    return out.includes('workspace service ready') ? true : undefined
  }, 270_000)
  return { npm, port, dir, out: () => out, exited }
}

function signalNumber (signal: NodeJS.Signals): number {
  return { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 }[signal as 'SIGINT'] ?? 0
}

async function portAnswers (port: number): Promise<boolean> {
  return await fetch(`http://127.0.0.1:${port}/api/health`).then(() => true, () => false)
}

/** The signal delivered, then: drained (health 503 while it lasts), npm exited 0, nothing left running. */
async function stopsCleanly (t: Test, s: Started, signal: NodeJS.Signals, send: () => void): Promise<void> {
  t.equal((await fetch(`http://127.0.0.1:${s.port}/api/health`)).status, 200, 'serving')
  send()
  await until('the drain', async () => s.out().includes('shutting down: draining') ? true : undefined, 20_000)
  t.equal((await fetch(`http://127.0.0.1:${s.port}/api/health`)).status, 503, 'draining: health answers 503')
  const code = await Promise.race([s.exited, new Promise<string>(resolve => setTimeout(() => { resolve('running') }, 30_000))])
  t.equal(code, 0, `npm exits 0 on ${signal}`)
  const lines = s.out().split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l) as { msg?: string, signal?: string })
  t.match(lines.find(l => l.msg?.startsWith('shutting down') === true), { signal }, `the server logged the ${signal}`)
  t.notOk(s.out().includes('exiting'), 'one stop, not a second signal\'s exit 1')
  t.notOk(await portAnswers(s.port), 'the port is closed')
  t.notOk(existsSync(join(s.dir, 'pglite', 'lock.pid')), 'the embedded database is closed (its lock released)')
  let left = true
  try { process.kill(-(s.npm.pid as number), 0) } catch { left = false }
  t.notOk(left, 'no process of this npm start is left')
}

t.test('SIGTERM to the npm process (docker stop, kill <pid>): the service drains and stops, npm exits 0', async t => {
  const s = await npmStart(t)
  await stopsCleanly(t, s, 'SIGTERM', () => { s.npm.kill('SIGTERM') })
})

t.test('SIGINT to the npm process: the same', async t => {
  const s = await npmStart(t)
  await stopsCleanly(t, s, 'SIGINT', () => { s.npm.kill('SIGINT') })
})

t.test('SIGINT to the whole process group (Ctrl-C at a terminal): one stop, with the drain', async t => {
  const s = await npmStart(t)
  await stopsCleanly(t, s, 'SIGINT', () => { process.kill(-(s.npm.pid as number), 'SIGINT') })
})
