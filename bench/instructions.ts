import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../src/paths.js'
import { freePort } from '../scripts/lib/free-port.js'
import { startCommand } from '../scripts/lib/start-command.js'
import { median } from './load.js'
import { BARE, BARE_PATH, httpJson, serviceEnv, throwawayDatabase, type Throwaway } from './servers.js'

// `npm run bench -- --instructions`: how many CPU instructions one request costs, counted by
// valgrind's callgrind in the user space of the whole process (every thread: V8's compiler and
// garbage collector included), for bare Fastify's GET /api/health (the service's body and JSON
// headers) and the service's.
// A count does not swing with the machine's load or with which CPU a process landed on: on the
// same build it repeats to within a few tenths of a percent, where req/s and CPU time per request
// move by a quarter between launches (docs/performance.md, "Health against bare Fastify"). What it
// leaves out is the kernel's share (the socket's read and write), the same for both servers.
//
// Each server runs under callgrind with instrumentation off (it starts at native speed, then
// about 50 times slower), takes a warm-up, then rounds of a fixed number of requests, each
// counted between `callgrind_control -i on` and `-i off`. Needs valgrind (Debian: `apt-get install
// valgrind`); `callgrind_control` comes with it.

const require = createRequire(import.meta.url)
const autocannon = require('autocannon') as (opts: {
  url: string, connections: number, amount: number
}) => Promise<{ requests: { total: number }, non2xx: number, errors: number, timeouts: number }>

/** Per request: V8's optimizing compiler, its GC, its C++ runtime, and the calls of TICK_LITERAL (callees included). */
interface Split { compiler: number, gc: number, runtime: number, tickLiteral: number }
interface Counted { perRequest: number, split: Split }

/**
 * Node's process.nextTick builds its tick object with computed keys. In a process whose tick
 * objects' shape was collected, V8's optimized code defines them through this runtime function,
 * thousands of instructions a tick (bare Fastify: 60.7k instructions a request in one launch, about
 * 95k in another, docs/performance.md): what it counts tells how much of a request that path takes.
 */
const TICK_LITERAL = 'Runtime_DefineKeyedOwnPropertyInLiteral'

/** Instructions by kind of code, from a callgrind dump's self costs (names of V8's and Node's C++ functions). */
function splitOf (file: string): { total: number, split: Split } {
  const names = new Map<string, string>()
  const split: Split = { compiler: 0, gc: 0, runtime: 0, tickLiteral: 0 }
  let total = 0
  let current = ''
  let callee = ''
  let callLine = false
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const fn = /^(c?)fn=\((\d+)\)(?: (.*))?$/.exec(line)
    if (fn !== null) {
      if (fn[3] !== undefined) names.set(fn[2] as string, fn[3])
      if (fn[1] === '') current = names.get(fn[2] as string) ?? ''
      else callee = names.get(fn[2] as string) ?? ''
      continue
    }
    if (line.startsWith('totals:')) total = Number(line.split(/\s+/)[1])
    if (line.startsWith('calls=')) { callLine = true; continue }
    if (!/^[0-9+*-]/.test(line)) continue
    const cost = Number(line.split(/\s+/)[1] ?? 0)
    // The line after calls= is what the call cost, callee included: not the caller's own.
    if (callLine) {
      callLine = false
      if (callee.includes(TICK_LITERAL) && !current.includes(TICK_LITERAL)) split.tickLiteral += cost
      continue
    }
    if (current.includes('compiler::')) split.compiler += cost
    else if (/Scaveng|MarkCompact|Marking|Sweeper|Evacuat|heap::base|Heap::/.test(current)) split.gc += cost
    else if (current.includes('v8::internal::')) split.runtime += cost
  }
  return { total, split }
}

interface Target { name: string, child: ChildProcess, port: number, path: string, controlEnv: NodeJS.ProcessEnv }

/**
 * callgrind_control finds its process by a pipe named after the USER and HOST of that process's
 * environment: it must run with the same two (the service's HOST is its listening address).
 */
function control (t: Target, ...args: string[]): string {
  const pid = String(t.child.pid)
  return execFileSync('callgrind_control', [...args, pid], { env: t.controlEnv, encoding: 'utf8', stdio: 'pipe' })
}

async function load (t: Target, amount: number): Promise<void> {
  const r = await autocannon({ url: `http://127.0.0.1:${t.port}${t.path}`, connections: 10, amount })
  const failed = r.non2xx + r.errors + r.timeouts
  if (failed > 0) throw new Error(`${t.name}: ${failed} of ${amount} requests did not answer 2xx`)
}

/** One counted round: `amount` requests between instrumentation on and off, then a dump read back. */
async function countRound (t: Target, dir: string, amount: number, keepAs: string | null): Promise<Counted> {
  control(t, '-z')
  control(t, '-i', 'on')
  await load(t, amount)
  control(t, '-i', 'off')
  const before = new Set(readdirSync(dir))
  control(t, '-d')
  const deadline = Date.now() + 30_000
  for (;;) {
    const fresh = readdirSync(dir).filter(f => !before.has(f) && f.startsWith(`cg.${t.child.pid ?? ''}.`))
    const complete = (f: string): boolean => statSync(f).size > 0 && readFileSync(f, 'utf8').includes('totals:')
    const file = fresh.map(f => join(dir, f)).find(complete)
    if (file !== undefined) {
      const { total, split } = splitOf(file)
      if (keepAs !== null) copyFileSync(file, keepAs)
      const per = (x: number): number => x / amount
      const { compiler, gc, runtime, tickLiteral } = split
      return {
        perRequest: per(total),
        split: { compiler: per(compiler), gc: per(gc), runtime: per(runtime), tickLiteral: per(tickLiteral) }
      }
    }
    if (Date.now() > deadline) throw new Error(`${t.name}: no callgrind dump after 30 s`)
    await new Promise(resolve => setTimeout(resolve, 200))
  }
}

function underCallgrind (
  name: string, dir: string, nodeArgs: string[], env: NodeJS.ProcessEnv, port: number, path: string
): Target {
  const args = [
    '--tool=callgrind', '--smc-check=all-non-file', '--instr-atstart=no',
    `--callgrind-out-file=${join(dir, 'cg.%p')}`, process.execPath, ...nodeArgs
  ]
  const child = spawn('valgrind', args, { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] })
  let err = ''
  child.stderr?.on('data', (c: Buffer) => { err = (err + c.toString()).slice(-4000) })
  child.once('exit', code => {
    if (code !== null && code !== 0) process.stderr.write(`${name} exited ${code}:\n${err}\n`)
  })
  const controlEnv: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['USER', 'HOST'] as const) {
    if (env[name] === undefined) delete controlEnv[name]
    else controlEnv[name] = env[name]
  }
  return { name, child, port, path, controlEnv }
}

async function ready (t: Target, ms = 300_000): Promise<void> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if ((await httpJson(t.port, 'GET', t.path).catch(() => null))?.status === 200) return
    if (t.child.exitCode !== null) throw new Error(`${t.name} exited before answering`)
    await new Promise(resolve => setTimeout(resolve, 500))
  }
  throw new Error(`${t.name} did not answer ${t.path} within ${ms / 1000} s under callgrind`)
}

/** SIGTERM (valgrind then removes its control pipes from /tmp), SIGKILL after 10 s and the pipes removed here. */
async function stopTarget (t: Target): Promise<void> {
  if (t.child.exitCode === null && t.child.signalCode === null) {
    const exited = new Promise(resolve => t.child.once('exit', resolve))
    t.child.kill('SIGTERM')
    await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 10_000))])
    if (t.child.exitCode === null && t.child.signalCode === null) t.child.kill('SIGKILL')
  }
  const pid = String(t.child.pid)
  for (const f of readdirSync(tmpdir()).filter(f => f.startsWith('vgdb-pipe-') && f.includes(`-${pid}-by-`))) {
    rmSync(join(tmpdir(), f), { force: true })
  }
}

const k = (x: number): string => `${(x / 1000).toFixed(1)}k`

export async function runInstructions (opts: {
  pgUrl: string | null
  requests: number
  warmup: number
  rounds: number
  /** Where the last round's callgrind dumps are kept (`--profile`: bench/profiles), for callgrind_annotate. */
  keepIn: string | null
}): Promise<void> {
  for (const [flag, n] of [['--requests', opts.requests], ['--rounds', opts.rounds]] as const) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} expects a whole number ≥ 1, got ${n}`)
  }
  try {
    execFileSync('valgrind', ['--version'], { stdio: 'ignore' })
  } catch {
    throw new Error('--instructions needs valgrind on the PATH (Debian: apt-get install valgrind)')
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-callgrind-'))
  let db: Throwaway | null = null
  const targets: Target[] = []
  try {
    const barePort = await freePort()
    targets.push(underCallgrind(
      'bare Fastify GET /api/health', dir, ['--input-type=module', '-e', BARE],
      { PATH: process.env.PATH, USER: process.env.USER, PORT: String(barePort) }, barePort, BARE_PATH
    ))
    db = opts.pgUrl !== null ? await throwawayDatabase(opts.pgUrl, 'ws_bench') : null
    const servicePort = await freePort()
    const dataDir = join(dir, 'data')
    // No SMTP relay: health's answer does not depend on one. What runs by the clock runs once a
    // minute (the most HEALTH_CACHE_MS and JOBS_POLL_MS allow): at valgrind's speed a ping or a
    // job queue's poll every second or two of wall time is fifty times more of them a request than
    // at native speed, counted as the request's (and the ping's 2 s deadline fails on PGlite).
    const slowClock = { HEALTH_CACHE_MS: '60000', JOBS_POLL_MS: '60000' }
    const env = { ...serviceEnv(dataDir, servicePort, '', db?.url ?? null, slowClock), USER: process.env.USER }
    const { nodeFlags, script } = startCommand()
    targets.push(underCallgrind(
      `service GET /api/health (${db !== null ? 'postgres' : 'pglite'})`, dir,
      [...nodeFlags, join(projectRoot, script)], env, servicePort, '/api/health'
    ))
    for (const t of targets) await ready(t)
    process.stdout.write(`bench: under callgrind; warm-up ${opts.warmup} requests each, then ${opts.rounds} ` +
      `rounds of ${opts.requests}\n`)
    for (const t of targets) await load(t, opts.warmup)
    const counted = new Map<Target, Counted[]>(targets.map(t => [t, []]))
    for (let r = 1; r <= opts.rounds; r++) {
      for (const t of targets) {
        const keepAs = opts.keepIn !== null && r === opts.rounds
          ? join(opts.keepIn, `instructions-${t.name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.callgrind`)
          : null
        if (keepAs !== null) mkdirSync(opts.keepIn as string, { recursive: true })
        const c = await countRound(t, dir, opts.requests, keepAs)
        counted.get(t)?.push(c)
        const { compiler, gc, runtime, tickLiteral } = c.split
        process.stdout.write(`  round ${r}: ${t.name.padEnd(36)} ${k(c.perRequest)} instructions per request ` +
          `(V8 compiler ${k(compiler)}, GC ${k(gc)}, V8 runtime ${k(runtime)}; nextTick's runtime path ` +
          `${k(tickLiteral)})\n`)
      }
    }
    process.stdout.write('\n')
    // The compiler's share is warm-up that outlasted the warm-up (it ends); the nextTick path is
    // a property of the process's history, not of the request's code (TICK_LITERAL). Both apart.
    const summary = (t: Target): { all: number, own: number, code: number, tick: number } => {
      const cs = counted.get(t) ?? []
      const all = median(cs.map(c => c.perRequest))
      const own = median(cs.map(c => c.perRequest - c.split.compiler))
      const tick = median(cs.map(c => c.split.tickLiteral))
      return { all, own, code: own - tick, tick }
    }
    for (const t of targets) {
      const x = summary(t)
      process.stdout.write(`${t.name.padEnd(36)} ${k(x.all)} instructions per request; without V8's compiler ` +
        `${k(x.own)}, of which nextTick's runtime path ${k(x.tick)}\n`)
    }
    const [bare, service] = targets.map(summary) as [ReturnType<typeof summary>, ReturnType<typeof summary>]
    process.stdout.write(`service / bare Fastify, without V8's compiler: ${(service.own / bare.own).toFixed(2)}× ` +
      `the instructions; without nextTick's runtime path too: ${(service.code / bare.code).toFixed(2)}×\n`)
  } finally {
    for (const t of targets) await stopTarget(t)
    await db?.drop()
    rmSync(dir, { recursive: true, force: true })
  }
}
