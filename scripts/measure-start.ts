// Time from spawning a start command to its first 200 on GET /api/health, over several runs:
// median, min and max, and the CPU time the command's processes had used by then (user + system,
// read from /proc, Linux: less sensitive to other load on the machine than the wall clock). Each
// run starts the command in its own process group, polls the health endpoint every 10 ms, then
// sends SIGTERM to the group and waits for it to end.
//
//   npx tsx scripts/measure-start.ts --data-dir /tmp/d -- node dist/src/server.js
//   npx tsx scripts/measure-start.ts --data-dir /tmp/d -- npm start
//   npx tsx scripts/measure-start.ts --url postgres://postgres@127.0.0.1:5432/db -- npm start
//   npx tsx scripts/measure-start.ts --fresh -- npm start                 # an empty DATA_DIR each run
//   npx tsx scripts/measure-start.ts --touch src/app.ts -- npm start      # one source file changed
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readdirSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { freePort } from './lib/free-port.js'

const { values, positionals } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    'data-dir': { type: 'string' },
    url: { type: 'string' },
    fresh: { type: 'boolean', default: false },
    touch: { type: 'string' }
  },
  allowPositionals: true,
  strict: true
})
const [command, ...args] = positionals
if (command === undefined) throw new Error('usage: measure-start.ts [options] -- <command> [args…]')
const runs = Number(values.runs)
const timeoutMs = 120_000

// CPU seconds of the processes in group `pgid`, with those of their children already waited for
// (npm's build step), from /proc/<pid>/stat in clock ticks (100 per second on Linux).
function groupCpuSeconds (pgid: number): number {
  let ticks = 0
  for (const pid of readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    let stat: string
    try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { continue }
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    if (f[2] === pgid) ticks += (f[11] ?? 0) + (f[12] ?? 0) + (f[13] ?? 0) + (f[14] ?? 0)
  }
  return ticks / 100
}

async function once200 (dataDir: string | null): Promise<{ ms: number, cpu: number }> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), LOG_LEVEL: 'warn' }
  if (values.url !== undefined) env.DATABASE_URL = values.url
  if (dataDir !== null) env.DATA_DIR = dataDir
  const started = performance.now()
  const child = spawn(command as string, args, { env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] })
  const exited = once(child, 'exit')
  let ms: number | null = null
  let cpu = 0
  while (ms === null && performance.now() - started < timeoutMs && child.exitCode === null) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`)
      await res.arrayBuffer()
      if (res.status === 200) { ms = performance.now() - started; cpu = groupCpuSeconds(child.pid as number) }
    } catch {}
    if (ms === null) await sleep(10)
  }
  if (child.exitCode === null) process.kill(-(child.pid as number), 'SIGTERM')
  await exited
  if (ms === null) throw new Error(`no 200 on /api/health (exit ${String(child.exitCode)})`)
  return { ms, cpu }
}

const samples: number[] = []
const cpus: number[] = []
for (let i = 0; i < runs; i++) {
  if (values.touch !== undefined) { const now = new Date(); utimesSync(values.touch, now, now) }
  const dir = values.fresh ? mkdtempSync(join(tmpdir(), 'measure-start-')) : values['data-dir'] ?? null
  try {
    const { ms, cpu } = await once200(dir)
    samples.push(ms)
    cpus.push(cpu)
  } finally {
    if (values.fresh && dir !== null) rmSync(dir, { recursive: true, force: true })
  }
}
function summary (values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  const s = (v: number | undefined): string => (v ?? 0).toFixed(2)
  return `${s(sorted[Math.floor(sorted.length / 2)])} s median (${s(sorted[0])}–${s(sorted.at(-1))} s: ` +
    `${values.map(s).join(' ')})`
}
console.log(`${[command, ...args].join(' ')}, ${runs} runs\n` +
  `  first 200 after ${summary(samples.map(ms => ms / 1000))}\n  CPU time by then ${summary(cpus)}`)
