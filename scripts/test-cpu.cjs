'use strict'
// Where a test run's CPU goes, per process: every test file, every service a test starts, every
// PGlite initdb child, every script.
//
//   TEST_CPU_LOG=/tmp/cpu.tsv NODE_OPTIONS="--require $PWD/scripts/test-cpu.cjs" npm test
//   node scripts/test-cpu.cjs /tmp/cpu.tsv
//
// Required into a process (NODE_OPTIONS, inherited by the processes it starts), it appends one
// line when the process exits: pid, parent pid, CPU seconds (user + system), wall seconds, what
// ran. A process killed with SIGKILL writes nothing, and neither do Chromium or nginx. Run as a
// script, it reads such a file and prints the totals by kind and the costliest processes.

const fs = require('node:fs')
const path = require('node:path')

// Run as a script even when it is preloaded too (a run measured with it: tap hands every process
// it starts its NODE_OPTIONS again): then it is loaded once, as the preload, with itself as argv[1].
const asScript = require.main === module || (process.argv[1] !== undefined && path.resolve(process.argv[1]) === __filename)

if (!asScript) {
  const log = process.env.TEST_CPU_LOG
  if (log !== undefined && log !== '') {
    const started = Date.now()
    process.on('exit', () => {
      const { user, system } = process.cpuUsage()
      const what = process.argv.slice(1).join(' ').replace(process.cwd() + '/', '').replace(/\s+/g, ' ').slice(0, 200)
      const line = [process.pid, process.ppid, ((user + system) / 1e6).toFixed(2), ((Date.now() - started) / 1000).toFixed(1), what]
      try { fs.appendFileSync(log, line.join('\t') + '\n') } catch { /* a lost line, nothing else */ }
    })
  }
} else {
  const file = process.argv[2]
  if (file === undefined) {
    console.error('usage: node scripts/test-cpu.cjs <file written with TEST_CPU_LOG>')
    process.exit(1)
  }
  const rows = fs.readFileSync(file, 'utf8').split('\n').filter(l => l !== '').map(l => {
    const [pid, ppid, cpu, wall, what] = l.split('\t')
    return { pid, ppid, cpu: Number(cpu), wall: Number(wall), what: what ?? '' }
  })
  const kind = r => /\.test\.ts$/.test(r.what)
    ? 'test files'
    : /src\/server\.(ts|js)/.test(r.what)
      ? 'services started by tests'
      : /initdb/.test(r.what)
        ? 'PGlite initdb children'
        : 'other (tap, scripts, compilers)'
  const byKind = new Map()
  for (const r of rows) {
    const k = byKind.get(kind(r)) ?? { n: 0, cpu: 0 }
    k.n++
    k.cpu += r.cpu
    byKind.set(kind(r), k)
  }
  const total = rows.reduce((s, r) => s + r.cpu, 0)
  console.log(`${rows.length} processes, ${total.toFixed(0)} CPU-s`)
  for (const [k, v] of [...byKind].sort((a, b) => b[1].cpu - a[1].cpu)) {
    console.log(`  ${k}: ${v.n} processes, ${v.cpu.toFixed(0)} CPU-s (${(v.cpu / v.n).toFixed(1)} each)`)
  }
  console.log('costliest processes (CPU-s, wall s, what):')
  for (const r of [...rows].sort((a, b) => b.cpu - a.cpu).slice(0, 15)) {
    console.log(`  ${r.cpu.toFixed(1).padStart(6)} ${r.wall.toFixed(1).padStart(6)}  ${r.what.slice(0, 100)}`)
  }
}
