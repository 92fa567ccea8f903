import t from 'tap'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { keepTickShape } from '../../src/lib/tick-shape.js'
import { projectRoot } from '../../src/paths.js'
import { freePort } from '../../scripts/lib/free-port.js'
import { seededDataDir } from '../helpers/build.js'
import { stopProcess, tsImport, until } from '../helpers/service-process.js'

// src/lib/tick-shape.ts: the service keeps one of Node's tick objects alive from its first line,
// so that the full garbage collections of the embedded database's start cannot collect their
// shape; without it, every tick of every request was defined through V8's runtime for the life of
// the process (docs/performance.md, "Node's tick objects").

const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string, connections: number, amount: number
}) => Promise<{ non2xx: number, errors: number }>

t.test('keepTickShape keeps a tick object of each kind, once', async t => {
  const kept = keepTickShape()
  t.equal(kept.length, 2, 'one without arguments, one with')
  for (const tick of kept) {
    const symbols = Object.getOwnPropertySymbols(tick).map(s => s.description)
    t.ok(symbols.includes('async_id_symbol') && symbols.includes('trigger_async_id_symbol'), 'it is a tick object')
    t.type((tick as { callback?: unknown }).callback, 'function', 'with its callback')
  }
  t.same((kept[1] as { args?: unknown }).args, [null], 'the second carries its argument')
  t.equal(keepTickShape(), kept, 'a second call keeps nothing more')
})

interface ProfileNode { id: number, callFrame: { functionName: string } }
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

/** The share of a profile's busy time (idle left out) spent in frames named `name` themselves. */
function selfShare (profile: Profile, name: string): number {
  const names = new Map(profile.nodes.map(n => [n.id, n.callFrame.functionName]))
  let busy = 0
  let own = 0
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0
    const fn = names.get(id)
    if (fn === '(idle)') return
    busy += us
    if (fn === name) own += us
  })
  return busy > 0 ? own / busy : NaN
}

t.test('the service on the embedded database answers without defining its ticks through V8\'s runtime', async t => {
  // Measured on the service's own CPU samples: with the shape collected, process.nextTick (its
  // runtime calls are sampled as its own time) took 10-11.5 % of the busy time of health
  // requests; with it kept, 0.7-1.3 %. A share of one process's samples, not a time.
  t.setTimeout(300_000)
  const dir = await seededDataDir(t, 'ws-tick-shape-')
  const profiles = mkdtempSync(join(tmpdir(), 'ws-tick-profile-'))
  t.teardown(() => { rmSync(profiles, { recursive: true, force: true }) })
  const port = await freePort()
  const { DATABASE_URL: _server, REDIS_URL: _redis, NODE_OPTIONS: _loaders, ...env } = process.env
  const child = spawn(process.execPath, [
    '--import', join(projectRoot, 'bench/cpu-profile-on-signal.mjs'), ...tsImport, 'src/server.ts'
  ], {
    cwd: projectRoot,
    env: { ...env, PORT: String(port), DATA_DIR: dir, LOG_LEVEL: 'silent', METRICS_PORT: '', BENCH_PROFILE_DIR: profiles },
    stdio: 'ignore'
  })
  t.teardown(async () => { await stopProcess(child) })
  const url = `http://127.0.0.1:${port}/api/health`
  await until('the service', async () => (await fetch(url)).status === 200 ? true : undefined)
  // Enough requests for V8 to optimize the request path (the unoptimized code always goes
  // through the runtime), then a profiled stretch.
  const warm = await autocannon({ url, connections: 10, amount: 20_000 })
  t.equal(warm.non2xx + warm.errors, 0, 'every warm-up request answered 2xx')
  writeFileSync(join(profiles, 'next-name'), 'health')
  child.kill('SIGWINCH')
  await new Promise(resolve => setTimeout(resolve, 200))
  const measured = await autocannon({ url, connections: 10, amount: 20_000 })
  t.equal(measured.non2xx + measured.errors, 0, 'every profiled request answered 2xx')
  child.kill('SIGWINCH')
  const file = join(profiles, 'health.cpuprofile')
  await until('the profile', async () => existsSync(file) ? true : undefined, 30_000)
  const share = await until('a complete profile', async () => {
    try {
      return selfShare(JSON.parse(readFileSync(file, 'utf8')) as Profile, 'nextTick')
    } catch {
      return undefined
    }
  }, 30_000)
  t.comment(`process.nextTick's own share of the busy time: ${(100 * share).toFixed(1)} %`)
  t.ok(share < 0.04, `nextTick's own share is under 4 % (${(100 * share).toFixed(1)} %)`)
})
