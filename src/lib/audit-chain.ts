import { createHash, randomUUID } from 'node:crypto'

// The audit trail's hash chain (issue 55, item 4). A record's hash is SHA-256, in lower-case hex,
// over the RFC 8785 (JCS) canonical JSON of its exported fields — id, workspaceId, action, actor,
// source, target, payload, createdAt (ISO 8601 UTC, ms) and previousHash (the hash of the record
// before it in its workspace; null for a workspace's first) — so anyone holding an export line can
// recompute it (npm run audit:verify, src/audit/verify.ts). `sequence` and `hash` are not hashed:
// the chain's order is the previousHash links; sequence only says where a record claims to be.
// Here in src/lib because both the repository that writes the chain and the verifier use it.

/** The fields a record's hash covers, as an export line carries them. */
export interface ChainedFields {
  id: string
  workspaceId: string
  action: string
  actor: { type: string, id: string | null, label: string | null }
  source: string
  target: { type: string, id: string } | null
  payload: Record<string, unknown>
  createdAt: string
  previousHash: string | null
}

/**
 * RFC 8785 for what JSON.parse yields: object members sorted by their names' UTF-16 code units
 * (what Array#sort compares), no white space, strings and numbers as ECMAScript serialises them
 * (JSON.stringify: the shortest round-trip form, the escapes RFC 8785 prescribes).
 */
export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const members = Object.keys(value).sort()
    .filter(k => (value as Record<string, unknown>)[k] !== undefined)
    .map(k => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
  return `{${members.join(',')}}`
}

export function sha256Hex (text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/** A record's hash: what the service stores and the verifier recomputes. */
export function recordHash (fields: ChainedFields): string {
  const { id, workspaceId, action, actor, source, target, payload, createdAt, previousHash } = fields
  return sha256Hex(canonicalJson({ id, workspaceId, action, actor, source, target, payload, createdAt, previousHash }))
}

/**
 * The canonical form split around previousHash's value: `before + JSON(previousHash) + after`
 * is what recordHash hashes. The single-record insert (src/db/audit-events.ts) sends both halves
 * and lets the database hash them with the head it has just locked, in one statement.
 */
export function canonicalHalves (fields: Omit<ChainedFields, 'previousHash'>): { before: string, after: string } {
  // A value no payload holds: the split point is found by it alone.
  const marker = `\u0000${randomUUID()}`
  const text = canonicalJson({ ...fields, previousHash: marker })
  const at = text.indexOf(`"previousHash":${JSON.stringify(marker)}`)
  const value = JSON.stringify(marker)
  const start = at + '"previousHash":'.length
  return { before: text.slice(0, start), after: text.slice(start + value.length) }
}
