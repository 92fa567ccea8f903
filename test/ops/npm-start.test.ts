import t, { type Test } from 'tap'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { projectRoot } from '../../src/paths.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { startCommand } from '../../scripts/lib/start-command.js'
import { seededDataDir } from '../helpers/build.js'
import { ensureBuilt } from '../helpers/built.js'
import { stopProcess, until } from '../helpers/service-process.js'

// A supervisor stops `npm start` by signalling npm: Docker's `docker stop` and a plain
// `kill <pid>` send SIGTERM to the npm process alone; Ctrl-C at a terminal (and systemd's default
// KillMode=control-group) sends the signal to every process of the group at once. Either way the
// service drains and stops as `node dist/src/server.js` does on the same signal, npm exits 0, and
// nothing is left holding the port or the embedded database. A real `npm start` here, its
// prestart included (it finds nothing to build: the first test below built what changed, under the
// lock the bench smoke files share, so no two files write dist/ at once).

// The build may compile the whole project (tsc -b) on a loaded machine.
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

t.test('the build npm start runs (npm run build, when an input changed since the last)', async t => {
  const built = await ensureBuilt()
  t.equal(built.status, 0, `built ${built.output}`)
  // Nothing to do: silent. A build (an input changed, or none yet): each step said as it starts.
  if (built.output.trim() !== '') {
    t.match(built.output, /^npm start: .*building the service/m, 'why it builds')
    t.match(built.output, /^build 1\/3: compiling the TypeScript[^\n]*\n[\s\S]*^build 3\/3: done in [\d.]+ s$[\s\S]*^build: done in/m, 'each step')
  }
})

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

// Built once (issue 44): what the service runs was made by the build (the tests above ran it
// through npm start), and the service writes nowhere but its data directory — never under
// node_modules, which a read-only image or another user's install does not let it write. As root
// (CI) it runs as `nobody`, who can write only DATA_DIR; every path it writes is recorded by an
// observer preloaded into it (test/helpers/write-observer.mjs).
t.test('the built service as a user who cannot write the install: starts, serves, writes only DATA_DIR', async t => {
  const dir = await seededDataDir(t, 'ws-read-only-')
  const writes = `${dir}.writes`
  writeFileSync(writes, '')
  chmodSync(writes, 0o666) // the service's user appends to it
  t.teardown(() => { rmSync(writes, { force: true }) })
  const asNobody = process.getuid?.() === 0 && existsSync('/usr/bin/setpriv')
  if (asNobody) spawnSync('chown', ['-R', '65534:65534', dir])
  else t.comment('not root: the service runs as this user (the observer still sees every write)')
  const port = await freePort()
  // The service as it runs: without the test runner's loaders, coverage and process records.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) =>
    !['DATABASE_URL', 'REDIS_URL', 'NODE_OPTIONS', 'NODE_V8_COVERAGE'].includes(name) && !name.startsWith('_TAPJS_')))
  const { nodeFlags, script } = startCommand()
  const observer = pathToFileURL(join(projectRoot, 'test/helpers/write-observer.mjs')).href
  const node = [process.execPath, '--import', observer, ...nodeFlags, script]
  // Through env -u: the test runner adds its process records' loader to every child's NODE_OPTIONS.
  const user = asNobody ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
  const child = spawn('env', ['-u', 'NODE_OPTIONS', ...user, ...node], {
    cwd: projectRoot,
    env: { ...env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'warn', METRICS_PORT: '', WRITE_OBSERVER_LOG: writes },
    stdio: 'ignore'
  })
  t.teardown(async () => { await stopProcess(child) })
  const base = `http://127.0.0.1:${port}`
  await until('the service', async () => (await fetch(`${base}/api/health`)).status === 200 ? true : undefined, 120_000)
  t.equal((await fetch(`${base}/api/openapi.json`)).status, 200, 'the contract is served')
  t.equal((await fetch(`${base}/api/docs`)).status, 200, 'the API reference (read from node_modules) is served')
  await stopProcess(child, 'SIGTERM')
  t.same([child.exitCode, child.signalCode], [0, null], 'and stops cleanly')
  const written = [...new Set(readFileSync(writes, 'utf8').split('\n').filter(l => l !== ''))]
  t.ok(written.some(p => p.startsWith(`${dir}/`)), 'the observer saw the data directory written')
  t.same(written.filter(p => p.startsWith(join(projectRoot, 'node_modules'))), [], 'nothing under node_modules')
  t.same(written.filter(p => p !== dir && !p.startsWith(`${dir}/`)), [], 'nothing outside DATA_DIR')
})
