import { execFileSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'

// The load side of the benchmark: autocannon against a port, a sampler of the resident memory of
// the process under load, and CPU pinning with taskset.

export interface Measured { rps: number, p50: number, p99: number, total: number, unexpected: number }
export interface Round extends Measured {
  peakRssMb: number
  /** CPU time (user + system, all threads) the measured process spent per answered request, µs. */
  cpuUsPerRequest: number
  /** Which start of the servers it was measured in (`--launches`), from 1. */
  launch?: number
}

export function percentile (sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number
}

export const median = (xs: number[]): number => percentile([...xs].sort((a, b) => a - b), 50)

/** Resident set size of a process in MB (Linux /proc), or NaN elsewhere. */
export function rssMb (pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m !== null ? Number(m[1]) / 1024 : NaN
  } catch { return NaN }
}

// /proc/PID/stat counts CPU time in clock ticks: USER_HZ, 100 on every Linux architecture we run on.
const TICKS_PER_SECOND = 100

/** CPU time of a process (user + system, every thread) in µs (Linux /proc), or NaN elsewhere. */
export function cpuUs (pid: number): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) * (1e6 / TICKS_PER_SECOND)
  } catch { return NaN }
}

/** One round of `run`, with the peak RSS of the process `pid()` sampled every 100 ms and its CPU time. */
export async function measure (
  run: (seconds: number) => Promise<Measured>, pid: () => number, seconds: number
): Promise<Round> {
  let peak = 0
  const timer = setInterval(() => { peak = Math.max(peak, rssMb(pid())) }, 100)
  try {
    const cpuBefore = cpuUs(pid())
    const r = await run(seconds)
    const cpu = cpuUs(pid()) - cpuBefore
    peak = Math.max(peak, rssMb(pid()))
    return { ...r, peakRssMb: peak, cpuUsPerRequest: r.total > 0 ? cpu / r.total : NaN }
  } finally {
    clearInterval(timer)
  }
}

interface AutocannonResult {
  requests: { average: number, total: number }
  latency: { p50: number, p99: number }
  errors: number
  timeouts: number
  statusCodeStats?: Record<string, { count: number }>
}
export interface AutocannonRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string
  setupRequest?: (req: AutocannonRequest) => AutocannonRequest
}
// CommonJS without types.
const autocannon = createRequire(import.meta.url)('autocannon') as (opts: {
  url: string, connections: number, duration: number, requests: AutocannonRequest[]
}) => Promise<AutocannonResult>

/** A closed-loop load of `req` on a port; an answer other than `expect` counts as unexpected. */
export function cannon (port: number, expect: number, connections: number, req: AutocannonRequest) {
  return async (seconds: number): Promise<Measured> => {
    const r = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration: seconds, requests: [req] })
    const ok = r.statusCodeStats?.[String(expect)]?.count ?? 0
    const all = Object.values(r.statusCodeStats ?? {}).reduce((a, b) => a + b.count, 0)
    const unexpected = all - ok + r.errors + r.timeouts
    return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, total: r.requests.total, unexpected }
  }
}

// On a small machine the load generator and the server fight for the same cores, and the
// scheduler's choices swing a 5 s figure by ±50 %. With taskset (util-linux) and 2+ CPUs, the
// servers measured (bare Fastify, the service, the raw-work loop) run on the last CPU and this
// process (autocannon, the SMTP peer) on the first; --no-pin turns it off.
export interface Pinning {
  /** Whether servers and load generator are pinned to CPUs of their own. */
  on: boolean
  serverCpu: number
  loadCpu: number
  /** `cmd args` as run on the servers' CPU (unchanged when not pinned). */
  command: (cmd: string, args: string[]) => [string, string[]]
  /** Moves a running process (all its threads) to the servers' CPU. */
  movePid: (pid: number) => void
}

/** The CPUs this process may run on ("0,1", "0-3,6" from taskset), or null without taskset. */
function allowedCpus (): number[] | null {
  try {
    const answer = execFileSync('taskset', ['-pc', String(process.pid)], { encoding: 'utf8' })
    const list = answer.split(':').pop()?.trim() ?? ''
    return list.split(',').flatMap(part => {
      const [a, b] = part.split('-').map(Number) as [number, number | undefined]
      return b === undefined ? [a] : Array.from({ length: b - a + 1 }, (_, i) => a + i)
    }).filter(Number.isInteger)
  } catch {
    return null
  }
}

/** Moves process `pid`, all its threads, to CPU `cpu`. */
function moveTo (cpu: number, pid: number): void {
  execFileSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' })
}

/** Pins this process to the first allowed CPU (when `wanted` and possible); servers go to the last. */
export function pinCpus (wanted: boolean): Pinning {
  const cpus = wanted ? allowedCpus() : null
  const loadCpu = cpus?.[0] ?? 0
  const serverCpu = cpus?.at(-1) ?? 0
  const on = cpus !== null && cpus.length >= 2 && (() => {
    try { moveTo(loadCpu, process.pid); return true } catch { return false }
  })()
  return {
    on,
    serverCpu,
    loadCpu,
    command: (cmd, args) => on ? ['taskset', ['-c', String(serverCpu), cmd, ...args]] : [cmd, args],
    movePid: pid => { if (on) moveTo(serverCpu, pid) }
  }
}
