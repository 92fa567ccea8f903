import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync, readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from './free-port.js'

// From spawning a start command to its first 200 on GET /api/health: the wall time, the CPU time
// its processes had used by then (user + system, read from /proc, Linux: less sensitive to other
// load on the machine than the wall clock), and the highest resident memory of its process group
// (the service and any process it starts, e.g. the embedded database's initdb), sampled every
// 10 ms. The command runs in its own process group, which gets SIGTERM once it has answered.

export interface StartTime { ms: number, cpuSeconds: number, peakGroupRssMb: number }

interface GroupStats { cpuTicks: number, rssKb: number }

/** CPU ticks (children already waited for included) and RSS of the processes in group `pgid`. */
function groupStats (pgid: number): GroupStats {
  let cpuTicks = 0
  let rssKb = 0
  for (const pid of readdirSync('/proc').filter(d => /^\d+$/.test(d))) {
    let stat: string
    try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8') } catch { continue }
    // Fields after the command name (which may hold spaces), from field 3 (state) on.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number)
    if (f[2] !== pgid) continue
    cpuTicks += (f[11] ?? 0) + (f[12] ?? 0) + (f[13] ?? 0) + (f[14] ?? 0)
    rssKb += (f[21] ?? 0) * 4 // resident pages of 4 KiB
  }
  return { cpuTicks, rssKb }
}

export async function timeToFirst200 (
  command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000
): Promise<StartTime> {
  const port = await freePort()
  const started = performance.now()
  const child = spawn(command, args, {
    env: { ...env, PORT: String(port) }, detached: true, stdio: ['ignore', 'ignore', 'inherit']
  })
  const exited = once(child, 'exit')
  const pgid = child.pid as number
  let ms: number | null = null
  let cpuSeconds = 0
  let peakKb = 0
  while (ms === null && performance.now() - started < timeoutMs && child.exitCode === null) {
    const stats = groupStats(pgid)
    peakKb = Math.max(peakKb, stats.rssKb)
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`)
      await res.arrayBuffer()
      if (res.status === 200) { ms = performance.now() - started; cpuSeconds = groupStats(pgid).cpuTicks / 100 }
    } catch {}
    if (ms === null) await sleep(10)
  }
  if (child.exitCode === null) process.kill(-pgid, 'SIGTERM')
  await exited
  if (ms === null) throw new Error(`${command}: no 200 on /api/health (exit ${String(child.exitCode)})`)
  return { ms, cpuSeconds, peakGroupRssMb: peakKb / 1024 }
}
