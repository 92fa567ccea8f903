import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname } from 'node:path'
import { median, type Round } from './load.js'
import { HEALTH, INVALID, INVITE, RAW, UNAUTHENTICATED, type Scenario } from './scenarios.js'

// The summary of the rounds: a table of medians with each ratio to its baseline, the MET/MISS
// lines of the performance targets, and bench/results.json.

interface Row {
  scenario: string
  group: string
  rps: number
  p50Ms: number
  p99Ms: number
  peakRssMb: number
  requests: number
  unexpected: number
  rounds: number[]
  ratio: number | null
  ratioTo: string | null
}
interface Target { target: string, value: number, met: boolean, min?: number, max?: number }

/**
 * Medians over rounds (peak RSS: the highest of any round). Ratios are paired by round (same
 * minute, same machine load) and the median taken: the machine's drift between rounds cancels
 * out of each pair. An invite is compared with its raw work, the rest with bare Fastify.
 */
export function summarize (results: Map<Scenario, Round[]>): Row[] {
  const entries = [...results]
  const bare = entries.find(([s]) => s.group === 'baseline')?.[1] ?? []
  const roundsOf = (group: string, name: string): Round[] =>
    entries.find(([s]) => s.group === group && s.name === name)?.[1] ?? []
  const pairedRatio = (a: Round[], b: Round[]): number | null => {
    const rs = a.map((x, i) => (b[i]?.rps ?? 0) > 0 ? x.rps / (b[i] as Round).rps : NaN).filter(Number.isFinite)
    return rs.length > 0 ? median(rs) : null
  }
  return entries.map(([s, rs]) => {
    let ratio: number | null = null
    let ratioTo: string | null = null
    if (s.name === INVITE) [ratio, ratioTo] = [pairedRatio(rs, roundsOf(s.group, RAW)), 'raw work']
    else if (s.group !== 'baseline' && s.name !== RAW) [ratio, ratioTo] = [pairedRatio(rs, bare), 'bare Fastify']
    return {
      scenario: s.name,
      group: s.group,
      rps: median(rs.map(x => x.rps)),
      p50Ms: median(rs.map(x => x.p50)),
      p99Ms: median(rs.map(x => x.p99)),
      peakRssMb: Math.max(...rs.map(x => x.peakRssMb)),
      requests: rs.reduce((a, x) => a + x.total, 0),
      unexpected: rs.reduce((a, x) => a + x.unexpected, 0),
      rounds: rs.map(x => Math.round(x.rps)),
      ratio,
      ratioTo
    }
  })
}

/** The targets of README "Performance", per database measured. */
export function targets (rows: Row[], dbs: string[]): Target[] {
  const ratioOf = (db: string, scenario: string): number =>
    rows.find(r => r.group === db && r.scenario === scenario)?.ratio ?? NaN
  const list: Array<Omit<Target, 'met'>> = [
    ...dbs.map(db => ({ target: `health ≥ 0.8× bare Fastify (${db})`, value: ratioOf(db, HEALTH), min: 0.8 })),
    ...dbs.flatMap(db => [UNAUTHENTICATED, INVALID].map(name => ({
      target: `${name.slice(0, 3)} path ≥ 0.5× bare Fastify (${db})`, value: ratioOf(db, name), min: 0.5
    }))),
    ...dbs.map(db => ({ target: `invite ≥ 0.7× raw work (${db})`, value: ratioOf(db, INVITE), min: 0.7 })),
    ...dbs.filter(db => db === 'postgres').map(() => ({
      target: 'peak RSS on PostgreSQL under load ≤ 150 MB',
      value: Math.max(...rows.filter(r => r.group === 'postgres' && r.scenario !== RAW).map(r => r.peakRssMb)),
      max: 150
    }))
  ]
  return list.map(t => ({ ...t, met: t.max !== undefined ? t.value <= t.max : t.value >= (t.min ?? -Infinity) }))
}

const shown = (x: number): string => Number.isFinite(x) ? x.toFixed(2) : 'n/a'

export function formatTable (rows: Row[], goals: Target[], emailsReceived: number): string {
  const cell = (r: Row): string => [
    r.group.padEnd(9), r.scenario.padEnd(27), r.rps.toFixed(0).padStart(8),
    r.p50Ms.toFixed(1).padStart(7), r.p99Ms.toFixed(1).padStart(7),
    (r.peakRssMb.toFixed(0) + ' MB').padStart(9), (r.ratio !== null ? r.ratio.toFixed(2) + '×' : '').padStart(7)
  ].join(' ') + `  ${r.ratioTo ?? ''}${r.unexpected > 0 ? `  (${r.unexpected} unexpected answers)` : ''}`
  return [
    '',
    [
      'group'.padEnd(9), 'scenario'.padEnd(27), 'req/s'.padStart(8), 'p50 ms'.padStart(7), 'p99 ms'.padStart(7),
      'peak RSS'.padStart(9), 'ratio'.padStart(7)
    ].join(' ') + '  to',
    ...rows.map(cell),
    '',
    ...goals.map(t => `${t.met ? 'MET ' : 'MISS'}  ${t.target}: ${shown(t.value)}`),
    `e-mails received by the SMTP peer: ${emailsReceived}`
  ].join('\n') + '\n'
}

interface RunParams {
  rounds: number
  durationSeconds: number
  warmupSeconds: number
  connections: number
  pinnedCpus: { servers: number, loadGenerator: number } | null
}

export function writeResults (
  file: string, params: RunParams, rows: Row[], goals: Target[], emailsReceived: number
): void {
  const out = {
    generatedAt: new Date().toISOString(),
    machine: {
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? '',
      memoryGb: Math.round(totalmem() / 2 ** 30),
      loadAverageAtEnd: loadavg().map(x => Number(x.toFixed(2)))
    },
    params: { ...params, service: 'node --enable-source-maps dist/src/server.js, LOG_LEVEL=warn' },
    scenarios: rows.map(r => ({
      ...r,
      rps: Math.round(r.rps),
      p50Ms: Number(r.p50Ms.toFixed(2)),
      p99Ms: Number(r.p99Ms.toFixed(2)),
      peakRssMb: Number(r.peakRssMb.toFixed(1)),
      ratio: r.ratio !== null ? Number(r.ratio.toFixed(3)) : null
    })),
    targets: goals.map(t => ({ ...t, value: Number(t.value.toFixed(3)) })),
    emailsReceived
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n')
}
