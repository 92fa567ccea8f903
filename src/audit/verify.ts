import { createReadStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { recordHash, type ChainedFields } from '../lib/audit-chain.js'

// The offline check of an audit export (npm run audit:verify, docs/audit.md "Proof: how to
// verify"). Each line's hash is recomputed (a changed record), and each workspace's records are
// put in the order their previousHash links make — whatever order the lines come in — and compared
// with the places they claim (`sequence`): a link to no record in the file is a removal, a record
// whose links put it elsewhere is a reordering, two records after the same one are a fork. Only a
// little of each record is kept (hashes, ids, places), so a file of a million lines fits.

type FindingKind = 'malformed' | 'changed' | 'removed' | 'reordered' | 'forked' | 'duplicated' | 'digest'

export interface Finding {
  kind: FindingKind
  /** The record concerned (null: a line that is no record, or a digest). */
  recordId: string | null
  message: string
}

/** What of a record the linkage needs. */
interface Link {
  id: string
  workspaceId: string
  sequence: number
  previousHash: string | null
  hash: string
  line: number
  /** `audit.records_deleted`: the hash of the last record that deletion removed. */
  deletedUpTo: string | null
}

export interface VerifyReport {
  records: number
  /** Records older than the chain (no hash): nothing to check them against. */
  unchained: number
  findings: Finding[]
  /** Where each workspace's chain starts in the file and what vouches for its start. */
  notes: string[]
  /** The linked records by workspace, in chain order: what digests are checked against. */
  chains: Map<string, Link[]>
}

const HEX64 = /^[0-9a-f]{64}$/

function describe (l: Pick<Link, 'id' | 'sequence'>): string {
  return `record ${l.id} (sequence ${l.sequence})`
}

/** One export line: its link, a finding, or null for a record older than the chain. */
function readLine (text: string, line: number): { link: Link | null, finding: Finding | null } {
  let r: Partial<ChainedFields> & { sequence?: unknown, hash?: unknown }
  try {
    r = JSON.parse(text) as typeof r
  } catch {
    return { link: null, finding: { kind: 'malformed', recordId: null, message: `line ${line}: not JSON` } }
  }
  const id = typeof r.id === 'string' ? r.id : null
  if (r.hash === null || r.hash === undefined) return { link: null, finding: null }
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash) || typeof r.sequence !== 'number' ||
    typeof r.workspaceId !== 'string' || id === null) {
    const message = `line ${line}: not an audit record of a chain`
    return { link: null, finding: { kind: 'malformed', recordId: id, message } }
  }
  const payload = r.payload ?? {}
  const link: Link = {
    id,
    workspaceId: r.workspaceId,
    sequence: r.sequence,
    previousHash: r.previousHash ?? null,
    hash: r.hash,
    line,
    deletedUpTo: r.action === 'audit.records_deleted' && typeof payload.lastHash === 'string' ? payload.lastHash : null
  }
  const recomputed = recordHash(r as ChainedFields)
  const finding: Finding | null = recomputed === r.hash
    ? null
    : {
        kind: 'changed',
        recordId: id,
        message: `${describe(link)}, line ${line}: changed — its content does not match its hash ` +
          `(stored ${r.hash.slice(0, 12)}…, recomputed ${recomputed.slice(0, 12)}…)`
      }
  return { link, finding }
}

/** The findings of one workspace's links, and a note on where its chain starts. */
function checkChain (
  links: Link[], deletions: Map<string, Link>
): { findings: Finding[], note: string, order: Link[] } {
  const findings: Finding[] = []
  const bySeq = [...links].sort((a, b) => a.sequence - b.sequence)
  const byHash = new Map(bySeq.map(l => [l.hash, l]))
  const after = new Map<string | null, Link[]>()
  for (const l of bySeq) {
    const key = l.previousHash !== null && byHash.has(l.previousHash) ? l.previousHash : null
    const list = after.get(key)
    if (list === undefined) after.set(key, [l])
    else list.push(l)
  }
  // Runs start where a record links to nothing in the file: the file's first, and after removals.
  const starts = after.get(null) ?? []
  const first = bySeq[0] as Link
  const order: Link[] = []
  // A link reached twice is a loop (a record chained after itself or after one that follows it):
  // named once and not walked again, so a forged file ends in findings instead of running forever.
  const visited = new Set<Link>()
  for (const start of starts) {
    if (start !== first) {
      const before = bySeq[bySeq.indexOf(start) - 1]
      const missing = start.sequence - (before?.sequence ?? 0) - 1
      findings.push({
        kind: 'removed',
        recordId: start.id,
        message: missing > 0
          ? `${describe(start)}: ${missing} record(s) removed before it (sequence ${start.sequence - missing}` +
            `${missing > 1 ? `–${start.sequence - 1}` : ''}): its previous hash matches no record`
          : `${describe(start)}: the record it was chained after is gone (its previous hash ` +
            `${String(start.previousHash).slice(0, 12)}… matches no record): removed and renumbered, or rehashed`
      })
    }
    // Walk the links: each record's place is one after the record it links to.
    visited.add(start)
    const queue: Array<{ link: Link, place: number }> = [{ link: start, place: start.sequence }]
    for (let i = 0; i < queue.length; i++) {
      const { link, place } = queue[i] as { link: Link, place: number }
      order.push(link)
      if (link.sequence !== place) {
        findings.push({
          kind: 'reordered',
          recordId: link.id,
          message: `${describe(link)}: reordered — its chain puts it at sequence ${place}`
        })
      }
      const next = after.get(link.hash) ?? []
      if (next.length > 1) {
        findings.push({
          kind: 'forked',
          recordId: link.id,
          message: `${describe(link)}: the chain forks after it (${next.map(n => n.id).join(', ')})`
        })
      }
      for (const n of next) {
        if (visited.has(n)) {
          findings.push({
            kind: 'reordered',
            recordId: n.id,
            message: `${describe(n)}: its previous hash loops back to ${describe(link)}, a record it precedes`
          })
        } else {
          visited.add(n)
          queue.push({ link: n, place: place + 1 })
        }
      }
    }
  }
  // What no start reaches sits on a loop of its own: every record of it links to another of it.
  for (const link of bySeq) {
    if (visited.has(link)) continue
    const message = `${describe(link)}: on a loop, reached from no record`
    findings.push({ kind: 'reordered', recordId: link.id, message })
  }
  const deletion = first.previousHash === null ? undefined : deletions.get(first.previousHash)
  const note = first.previousHash === null
    ? `workspace ${first.workspaceId}: the chain starts at its first record, ${describe(first)}`
    : deletion !== undefined
      ? `workspace ${first.workspaceId}: starts at ${describe(first)}, after the records that record ${deletion.id} ` +
        '(audit.records_deleted) says retention deleted'
      : `workspace ${first.workspaceId}: starts at ${describe(first)}; the record before it is not in this file ` +
        '(an export of a time range, or deleted by retention: a digest vouches for it)'
  return { findings, note, order }
}

/** Checks the lines of an NDJSON export, as they come. */
export async function verifyLines (lines: AsyncIterable<string> | Iterable<string>): Promise<VerifyReport> {
  const findings: Finding[] = []
  const byWorkspace = new Map<string, Link[]>()
  const seen = new Map<string, string>()
  const deletions = new Map<string, Link>()
  let records = 0
  let unchained = 0
  let n = 0
  for await (const text of lines) {
    n++
    if (text.trim() === '') continue
    records++
    const { link, finding } = readLine(text, n)
    if (finding !== null) findings.push(finding)
    if (link === null) {
      if (finding === null) unchained++
      continue
    }
    // A resumed export may repeat a line: the same record twice is one; two versions of it are not.
    const earlier = seen.get(link.id)
    if (earlier !== undefined) {
      records--
      if (earlier !== link.hash) {
        const message = `${describe(link)}, line ${n}: appears twice, differently`
        findings.push({ kind: 'duplicated', recordId: link.id, message })
      }
      continue
    }
    seen.set(link.id, link.hash)
    if (link.deletedUpTo !== null) deletions.set(link.deletedUpTo, link)
    const links = byWorkspace.get(link.workspaceId)
    if (links === undefined) byWorkspace.set(link.workspaceId, [link])
    else links.push(link)
  }
  const notes: string[] = []
  const chains = new Map<string, Link[]>()
  for (const [workspaceId, links] of byWorkspace) {
    const checked = checkChain(links, deletions)
    findings.push(...checked.findings)
    notes.push(checked.note)
    chains.set(workspaceId, checked.order)
  }
  return { records, unchained, findings, notes, chains }
}

/** `verifyLines` over a file. */
export async function verifyExportFile (path: string): Promise<VerifyReport> {
  const input = createReadStream(path, { encoding: 'utf8' })
  try {
    return await verifyLines(createInterface({ input, crlfDelay: Infinity }))
  } finally {
    input.destroy()
  }
}
