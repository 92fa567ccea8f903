import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { projectRoot } from '../src/paths.js'

// `npm run bench -- --analyze <file>`: where the time of a V8 CPU profile (--profile) goes.

interface ProfileNode {
  id: number
  callFrame: { functionName: string, url: string, lineNumber: number }
  hitCount?: number
  children?: number[]
}
interface Profile { nodes: ProfileNode[], samples: number[], timeDeltas: number[] }

function frameLabel (n: ProfileNode): string {
  const url = n.callFrame.url.replace(/^file:\/\//, '')
  const where = url.includes('node_modules/')
    ? url.slice(url.lastIndexOf('node_modules/') + 13)
    : url.startsWith(projectRoot) ? relative(projectRoot, url) : url
  const line = where !== '' ? ':' + String(n.callFrame.lineNumber + 1) : ''
  return `${n.callFrame.functionName || '(anonymous)'} ${where}${line}`
}

/** A package (node_modules/<pkg>), "ours", "node core" or native: the unit of inclusive time. */
function packageOf (n: ProfileNode): string {
  const url = n.callFrame.url
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)
  if (m !== null) return m[1] as string
  if (url.includes('/dist/src/') || url.includes('/dist/handlers/')) return '(ours: dist/src, dist/handlers)'
  if (url.startsWith('node:')) return '(node core)'
  if (url === '') return n.callFrame.functionName.startsWith('(') ? n.callFrame.functionName : '(native)'
  return url
}

const add = <K>(m: Map<K, number>, k: K, v: number): void => { m.set(k, (m.get(k) ?? 0) + v) }

/** A V8 CPU profile (.cpuprofile) as written by the inspector; throws on a file still being written. */
const readProfile = (file: string): Profile => JSON.parse(readFileSync(file, 'utf8')) as Profile

/** Self time (µs) of each profile node: the time its frame was on top of the stack. */
function selfTimeByNode (prof: Profile): Map<number, number> {
  const self = new Map<number, number>()
  prof.samples.forEach((id, i) => { add(self, id, prof.timeDeltas[i] ?? 0) })
  return self
}

/** Top frames by self time, and inclusive time by package. */
export function analyzeProfile (file: string, top = 20): string {
  const prof = readProfile(file)
  const byId = new Map(prof.nodes.map(n => [n.id, n]))
  const self = selfTimeByNode(prof)
  const total = [...self.values()].reduce((a, b) => a + b, 0)
  const selfBy = new Map<string, number>()
  for (const [id, us] of self) { const n = byId.get(id); if (n !== undefined) add(selfBy, frameLabel(n), us) }
  const parent = new Map<number, number>()
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id)
  const inclusive = new Map<string, number>()
  for (const [id, us] of self) {
    const seen = new Set<string>()
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur)
      if (n === undefined) break
      const k = packageOf(n)
      if (!seen.has(k)) { seen.add(k); add(inclusive, k, us) }
    }
  }
  const pct = (us: number): string => `${((100 * us) / total).toFixed(1).padStart(5)}%`
  const topOf = (m: Map<string, number>): string[] =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, us]) => `    ${pct(us)}  ${k}`)
  return [
    `profile ${relative(projectRoot, file)}: ${(total / 1e6).toFixed(1)} s sampled`,
    '  self time, top frames:', ...topOf(selfBy),
    '  inclusive time by package:', ...topOf(inclusive)
  ].join('\n')
}
