import { mkdirSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname } from 'node:path'
import { startCommand } from '../scripts/lib/start-command.js'
import { median, type Round } from './load.js'
import { FRAMEWORKS, type Framework } from './servers.js'
import {
  handWrittenServer, HEALTH, INVITE, LIST, LIST_BY_KEY, VARIANT_BASE, type Scenario, type Server, type Variant
} from './scenarios.js'

// The summary of the rounds: a table of medians with each ratio to its baseline, the MET/MISS
// lines of the performance targets, and bench/results.json.

/**
 * A ratio of this row's req/s to a baseline's: the median of per-round pairs, with their spread;
 * with `--launches`, also the median of each launch's pairs, in launch order.
 */
interface Ratio { to: string, median: number, min: number, max: number, launches?: number[] }
interface Row {
  scenario: string
  group: string
  server: Server
  rps: number
  p50Ms: number
  p99Ms: number
  cpuUsPerRequest: number
  peakRssMb: number
  requests: number
  unexpected: number
  rounds: number[]
  ratios: Ratio[]
}
export interface Target { target: string, value: number, met: boolean, min?: number, max?: number }

/**
 * Medians over rounds (peak RSS: the highest of any round). Ratios are paired by round (same
 * minute, same machine load) and the median taken: the machine's drift between rounds cancels
 * out of each pair; min and max of the pairs are the spread. A service path is compared with the
 * same path on each hand-written baseline (Fastify, Hono, Express); health also with bare Fastify,
 * an invite also with its raw work.
 */
export function summarize (results: Map<Scenario, Round[]>): Row[] {
  const entries = [...results]
  const roundsOf = (group: string, server: Server, name?: string): Round[] =>
    entries.find(([s]) => s.group === group && s.server === server && (name === undefined || s.name === name))
      ?.[1] ?? []
  const paired = (to: string, a: Round[], b: Round[]): Ratio[] => {
    // Round i of one pooled list and round i of the other were measured in the same launch.
    const ratioAt = (x: Round, i: number): number => (b[i]?.rps ?? 0) > 0 ? x.rps / (b[i] as Round).rps : NaN
    const pairs = a.map((x, i) => ({ launch: x.launch ?? 1, r: ratioAt(x, i) })).filter(p => Number.isFinite(p.r))
    if (pairs.length === 0) return []
    const rs = pairs.map(p => p.r)
    const byLaunch = new Map<number, number[]>()
    for (const p of pairs) byLaunch.set(p.launch, [...(byLaunch.get(p.launch) ?? []), p.r])
    const launches = byLaunch.size > 1 ? [...byLaunch.values()].map(median) : undefined
    const spread = { min: Math.min(...rs), max: Math.max(...rs) }
    return [{ to, median: median(rs), ...spread, ...(launches !== undefined ? { launches } : {}) }]
  }
  return entries.map(([s, rs]) => {
    const ratios: Ratio[] = []
    const base = VARIANT_BASE[s.server as Variant] as Server | undefined
    if (base !== undefined) ratios.push(...paired(base, rs, roundsOf(s.group, base, s.name)))
    if (s.server === 'service') {
      for (const framework of FRAMEWORKS) {
        const hand = handWrittenServer(framework)
        ratios.push(...paired(hand, rs, roundsOf(s.group, hand, s.name)))
      }
      if (s.name === HEALTH) {
        ratios.push(...paired('bare Fastify', rs, roundsOf('baseline', 'bare')))
        ratios.push(...paired('bare Fastify, after the app', rs, roundsOf('baseline', 'bare, after the app')))
      }
      if (s.name === INVITE) ratios.push(...paired('raw work', rs, roundsOf(s.group, 'raw')))
      if (s.name === LIST_BY_KEY) ratios.push(...paired('the cookie', rs, roundsOf(s.group, 'service', LIST)))
    }
    return {
      scenario: s.name,
      group: s.group,
      server: s.server,
      rps: median(rs.map(x => x.rps)),
      p50Ms: median(rs.map(x => x.p50)),
      p99Ms: median(rs.map(x => x.p99)),
      cpuUsPerRequest: median(rs.map(x => x.cpuUsPerRequest)),
      peakRssMb: Math.max(...rs.map(x => x.peakRssMb)),
      requests: rs.reduce((a, x) => a + x.total, 0),
      unexpected: rs.reduce((a, x) => a + x.unexpected, 0),
      rounds: rs.map(x => Math.round(x.rps)),
      ratios
    }
  })
}

/**
 * Issue 52's targets against the hand-written baselines: the service keeps pace with Fastify
 * written by hand (≥ 0.95×) and is ahead of Hono and Express written by hand (> 1.0×).
 */
const AGAINST: Record<Framework, { words: string, met: (ratio: number) => boolean }> = {
  Fastify: { words: '≥ 0.95×', met: r => r >= 0.95 },
  Hono: { words: '> 1.0× (ahead)', met: r => r > 1.0 },
  Express: { words: '> 1.0× (ahead)', met: r => r > 1.0 }
}

/**
 * The ratio line of the service against one hand-written baseline on one database: the geometric
 * mean of its paths' ratios (each the median of its rounds' pairs), the lowest path named beside it.
 */
function againstHandWritten (rows: Row[], db: string, framework: Framework): Target {
  const to = handWrittenServer(framework)
  const paths = rows.flatMap(r => {
    const ratio = r.group === db && r.server === 'service' ? r.ratios.find(x => x.to === to) : undefined
    return ratio !== undefined ? [{ scenario: r.scenario, ratio: ratio.median }] : []
  })
  const value = paths.length === 0 ? NaN : Math.exp(paths.reduce((a, p) => a + Math.log(p.ratio), 0) / paths.length)
  const lowest = paths.reduce<typeof paths[0] | undefined>(
    (low, p) => low === undefined || p.ratio < low.ratio ? p : low, undefined
  )
  const where = lowest === undefined ? 'no path' : `lowest ${lowest.ratio.toFixed(2)}, ${lowest.scenario}`
  const { words, met } = AGAINST[framework]
  const mean = `geometric mean of ${paths.length} path${paths.length === 1 ? '' : 's'}`
  return {
    target: `service / ${to} ${words} (${db}; ${mean}, ${where})`,
    value,
    met: met(value)
  }
}

/** The targets of issues 20, 42 and 52 / docs/performance.md, per database measured. */
export function targets (rows: Row[], dbs: string[]): Target[] {
  const ratioOf = (db: string, scenario: string, to: string): number =>
    rows.find(r => r.group === db && r.server === 'service' && r.scenario === scenario)
      ?.ratios.find(x => x.to === to)?.median ?? NaN
  const list: Array<Omit<Target, 'met'>> = dbs.flatMap(db => [
    // Health against bare Fastify (issue 42) is shown beside health's row, no longer a target
    // (issue 52): the service's rest is what a real service does, and no user feels it.
    { target: `invite ≥ 0.95× raw work (${db})`, value: ratioOf(db, INVITE, 'raw work'), min: 0.95 },
    {
      target: `list page with an API key ≥ 0.90× with the cookie (${db})`,
      value: ratioOf(db, LIST_BY_KEY, 'the cookie'),
      min: 0.9
    }
  ])
  for (const db of dbs) {
    const service = rows.filter(r => r.group === db && r.server === 'service')
    if (service.length === 0) continue
    const peak = Math.max(...service.map(r => r.peakRssMb))
    list.push(db === 'postgres'
      ? { target: 'peak RSS on PostgreSQL under load ≤ 150 MB', value: peak, max: 150 }
      : { target: 'peak RSS on PGlite under load ≤ 250 MB', value: peak, max: 250 })
  }
  const bounded = list.map(t =>
    ({ ...t, met: t.max !== undefined ? t.value <= t.max : t.value >= (t.min ?? -Infinity) }))
  return [...dbs.flatMap(db => FRAMEWORKS.map(f => againstHandWritten(rows, db, f))), ...bounded]
}

const FEATURE: Record<Variant, string> = {
  'service, no metrics': 'metrics',
  'service + traces': 'traces (every request sampled)',
  'hand-written, no headers': 'security headers',
  'bare, after the app': 'the built app in the process'
}
/** The variants that add their feature to their base (the others take it away). */
const ADDS: Variant[] = ['service + traces', 'bare, after the app']

/** `--costs`: what each cross-cutting feature adds to a health request, in CPU and in req/s. */
function costs (rows: Row[]): string[] {
  return rows.flatMap(r => {
    const variant = r.server as Variant
    const base = rows.find(b => b.group === r.group && b.scenario === r.scenario && b.server === VARIANT_BASE[variant])
    if (FEATURE[variant] === undefined || base === undefined) return []
    const [on, off] = ADDS.includes(variant) ? [r, base] : [base, r]
    const ratio = off.rps > 0 ? on.rps / off.rps : NaN
    const cpu = (on.cpuUsPerRequest - off.cpuUsPerRequest).toFixed(0)
    const path = r.group === 'baseline' ? r.scenario : 'health'
    return [`cost of ${FEATURE[variant]} (${r.group}, ${path}): ${cpu} µs CPU per request; ` +
      `with it ${shown(ratio)}× the req/s without`]
  })
}

const shown = (x: number): string => Number.isFinite(x) ? x.toFixed(2) : 'n/a'
const ratioText = (r: Ratio): string => `${r.median.toFixed(2)}× ${r.to} (${r.min.toFixed(2)}–${r.max.toFixed(2)}` +
  (r.launches !== undefined ? `; by launch ${r.launches.map(x => x.toFixed(2)).join(', ')})` : ')')

export function formatTable (rows: Row[], goals: Target[], emailsReceived: number): string {
  const cell = (r: Row): string => [
    r.group.padEnd(9), r.server.padEnd(24), r.scenario.padEnd(27), r.rps.toFixed(0).padStart(8),
    r.p50Ms.toFixed(1).padStart(7), r.p99Ms.toFixed(1).padStart(7),
    (Number.isFinite(r.cpuUsPerRequest) ? r.cpuUsPerRequest.toFixed(0) : 'n/a').padStart(7),
    (r.peakRssMb.toFixed(0) + ' MB').padStart(9)
  ].join(' ') + `  ${r.ratios.map(ratioText).join(', ')}` +
    (r.unexpected > 0 ? `  (${r.unexpected} unexpected answers)` : '')
  return [
    '',
    [
      'group'.padEnd(9), 'server'.padEnd(24), 'scenario'.padEnd(27), 'req/s'.padStart(8), 'p50 ms'.padStart(7),
      'p99 ms'.padStart(7), 'CPU µs'.padStart(7), 'peak RSS'.padStart(9)
    ].join(' ') + '  ratio (median of rounds, min–max)',
    ...rows.map(cell),
    '',
    ...goals.map(t => `${t.met ? 'MET ' : 'MISS'}  ${t.target}: ${shown(t.value)}`),
    ...costs(rows),
    `e-mails received by the SMTP peer: ${emailsReceived}`
  ].join('\n') + '\n'
}

interface RunParams {
  rounds: number
  launches: number
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
    params: { ...params, service: `${startCommand().line}, LOG_LEVEL=warn` },
    scenarios: rows.map(r => ({
      ...r,
      rps: Math.round(r.rps),
      p50Ms: Number(r.p50Ms.toFixed(2)),
      p99Ms: Number(r.p99Ms.toFixed(2)),
      cpuUsPerRequest: Math.round(r.cpuUsPerRequest),
      peakRssMb: Number(r.peakRssMb.toFixed(1)),
      ratios: r.ratios.map(x => ({
        to: x.to,
        median: Number(x.median.toFixed(3)),
        min: Number(x.min.toFixed(3)),
        max: Number(x.max.toFixed(3)),
        ...(x.launches !== undefined ? { launches: x.launches.map(l => Number(l.toFixed(3))) } : {})
      }))
    })),
    targets: goals.map(t => ({ ...t, value: Number(t.value.toFixed(3)) })),
    emailsReceived
  }
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, JSON.stringify(out, null, 2) + '\n')
}
