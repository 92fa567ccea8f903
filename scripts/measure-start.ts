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
import { mkdtempSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { timeToFirst200 } from './lib/start-time.js'

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

async function once200 (dataDir: string | null): Promise<{ ms: number, cpu: number }> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' }
  if (values.url !== undefined) env.DATABASE_URL = values.url
  if (dataDir !== null) env.DATA_DIR = dataDir
  const { ms, cpuSeconds } = await timeToFirst200(command as string, args, env)
  return { ms, cpu: cpuSeconds }
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
