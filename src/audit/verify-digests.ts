import { createPublicKey, verify } from 'node:crypto'
import type { components } from '../generated/openapi.js'
import { sha256Hex } from '../lib/audit-chain.js'
import { digestBody } from './digests.js'
import type { Finding, VerifyReport } from './verify.js'

// The signed digests checked against an export (npm run audit:verify -- export.ndjson --digests
// digests.json --keys keys.json; the files are the answers of getAuditEventsDigests and
// getAuditEventsSigningKeys). Each digest must be signed by a listed key and chain to the one
// before; each digest whose segment the file reaches must find its last record with its hash and
// place, and as many records as it counted: what the file alone cannot show — records removed at
// the end of the chain or before the file's first — the digests show.

type AuditDigest = components['schemas']['AuditDigest']
type AuditSigningKey = components['schemas']['AuditSigningKey']

function finding (d: AuditDigest, message: string): Finding {
  return { kind: 'digest', recordId: null, message: `digest of ${d.hour} (workspace ${d.workspaceId}): ${message}` }
}

export function verifyDigests (
  report: Pick<VerifyReport, 'chains'>, digests: readonly AuditDigest[], keys: readonly AuditSigningKey[]
): Finding[] {
  const findings: Finding[] = []
  const keyOf = new Map(keys.map(k => [
    k.kid, createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: k.x }, format: 'jwk' })
  ]))
  const previous = new Map<string, AuditDigest>()
  for (const d of [...digests].sort((a, b) => a.hour.localeCompare(b.hour))) {
    const { digestHash, signature, ...signed } = d
    const body = digestBody(signed)
    const key = keyOf.get(d.kid)
    if (key === undefined) findings.push(finding(d, `signed by ${d.kid}, which is not among the keys`))
    else if (!verify(null, Buffer.from(body, 'utf8'), key, Buffer.from(signature, 'base64url'))) {
      findings.push(finding(d, 'its signature does not verify'))
    }
    if (sha256Hex(body) !== digestHash) findings.push(finding(d, 'its digestHash does not match its fields'))
    const before = previous.get(d.workspaceId)
    if (before !== undefined && d.previousDigestHash !== before.digestHash) {
      findings.push(finding(d, `it does not follow the digest of ${before.hour}: a digest is missing or changed`))
    }
    previous.set(d.workspaceId, d)

    const chain = report.chains.get(d.workspaceId) ?? []
    const within = chain.filter(l => l.sequence >= d.firstSequence && l.sequence <= d.lastSequence)
    if (within.length === 0) continue // the file does not reach this digest's segment
    const last = chain.find(l => l.id === d.lastId)
    if (last === undefined) {
      findings.push(finding(d, `its last record ${d.lastId} (sequence ${d.lastSequence}) is not in the file: removed`))
    } else if (last.hash !== d.lastHash || last.sequence !== d.lastSequence) {
      findings.push(finding(d, `its last record ${d.lastId} is not the one signed (hash or place changed)`))
    }
    const first = chain[0]
    const whole = first !== undefined && first.sequence <= d.firstSequence
    if (whole && within.length < d.count) {
      findings.push(finding(d, `${d.count - within.length} of its ${d.count} records are not in the file: removed`))
    }
  }
  return findings
}
