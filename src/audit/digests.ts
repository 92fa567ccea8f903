import { createPrivateKey, generateKeyPairSync, randomUUID, sign } from 'node:crypto'
import type { Ports } from '../ports/index.js'
import type { JobDefinition } from '../ports/job-engine.js'
import type { components } from '../generated/openapi.js'
import { openWith, sealWith, type Keyring } from '../lib/crypto.js'
import { atRestKeyring, type SecretSettings } from '../lib/secret-keys.js'
import { pages, resealStore, type ResealCount } from '../lib/reseal.js'
import { canonicalJson, sha256Hex } from '../lib/audit-chain.js'
import { decodeCursor, pageOf } from '../lib/pagination.js'
import { queryInstant } from '../lib/date-time.js'
import type { Queryable } from '../db/client.js'
import {
  findSigningKey, insertDigest, insertSigningKey, listDigests, listSealedSigningKeys, listSigningKeys,
  listUndigestedSegments, resealSigningKey, retireSigningKeysBut, type ChainSegment, type DigestRow,
  type SealedSigningKey, type SigningKeyRow
} from '../db/audit-digests.js'

// Signed hourly digests of the audit chain (issue 55, item 4), as CloudTrail signs its digest
// files: at five past each hour, per workspace, the part of its chain no digest covers yet up to
// the last record created before the hour's end — first and last record, count, last hash, and
// the previous digest's hash, so the digests chain too — signed with the service's Ed25519 key.
// The key is made on first use and replaced every KEY_DAYS; the private key is sealed at rest
// (never readable in the database), the public keys are published, retired ones included, so
// every digest ever signed still verifies (npm run audit:verify -- … --digests … --keys …).

const HOUR_MS = 3_600_000
/** A signing key signs for this long; then a new one is made and the old one retired. */
const KEY_DAYS = 90

type AuditDigest = components['schemas']['AuditDigest']
type AuditSigningKey = components['schemas']['AuditSigningKey']

const context = (kid: string): string => `audit-signing-key:${kid}`

function signingKeyring (config: SecretSettings): Keyring {
  return atRestKeyring(config, 'audit signing keys')
}

/** What a digest's signature and digestHash cover: its fields but the two, as RFC 8785 JSON. */
export function digestBody (d: Omit<AuditDigest, 'digestHash' | 'signature'>): string {
  const { workspaceId, hour, firstSequence, lastSequence, firstId, lastId, count, lastHash, previousDigestHash } = d
  return canonicalJson({
    workspaceId, hour, firstSequence, lastSequence, firstId, lastId, count, lastHash, previousDigestHash, kid: d.kid
  })
}

/** The key that signs now: the newest, or a new one when there is none or it is KEY_DAYS old. */
async function currentKey (
  deps: Pick<Ports, 'db' | 'config' | 'clock'>
): Promise<{ kid: string, privateKey: ReturnType<typeof createPrivateKey> }> {
  const ring = signingKeyring(deps.config)
  const now = deps.clock.now()
  const found = await findSigningKey(deps.db)
  if (found !== null && now.getTime() - found.createdAt.getTime() < KEY_DAYS * 24 * HOUR_MS) {
    const der = Buffer.from(openWith(ring, found.privateKeyEnc, context(found.kid)), 'base64')
    return { kid: found.kid, privateKey: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }) }
  }
  const { publicKey, privateKey } = generateKeyPairSync('ed25519')
  const kid = `audit-${now.toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`
  const x = publicKey.export({ format: 'jwk' }).x as string
  const sealed = sealWith(ring, privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'), context(kid))
  await deps.db.transaction(async tx => {
    await insertSigningKey(tx, { kid, publicKey: x, privateKeyEnc: sealed, now })
    await retireSigningKeysBut(tx, kid, now)
  })
  return { kid, privateKey }
}

/** Signs every workspace's chain up to the last closed hour; the digests made. */
export async function signClosedHours (deps: Pick<Ports, 'db' | 'config' | 'clock' | 'log'>): Promise<number> {
  const now = deps.clock.now().getTime()
  const end = new Date(now - now % HOUR_MS)
  const segments = await listUndigestedSegments(deps.db, end)
  if (segments.length === 0) return 0
  const key = await currentKey(deps)
  let made = 0
  for (const segment of segments) {
    const d = { ...segment, hour: new Date(end.getTime() - HOUR_MS), kid: key.kid }
    const body = digestBody({ ...d, hour: d.hour.toISOString() })
    const signature = sign(null, Buffer.from(body, 'utf8'), key.privateKey).toString('base64url')
    if (await insertDigest(deps.db, { ...d, digestHash: sha256Hex(body), signature }, deps.clock.now())) made++
  }
  deps.log.info({ digests: made }, `audit digests signed for ${made} workspaces`)
  return made
}

export function auditDigestJobs (deps: Pick<Ports, 'db' | 'config' | 'clock' | 'log'>): JobDefinition[] {
  return [{ queue: 'audit-digests', cron: '5 * * * *', run: async () => { await signClosedHours(deps) } }]
}

function keyView (k: SigningKeyRow): AuditSigningKey {
  return {
    kid: k.kid,
    kty: 'OKP',
    crv: 'Ed25519',
    alg: 'EdDSA',
    use: 'sig',
    x: k.publicKey,
    createdAt: k.createdAt.toISOString(),
    retiredAt: k.retiredAt?.toISOString() ?? null
  }
}

function digestView (d: DigestRow): AuditDigest {
  const segment: ChainSegment = d
  return { ...segment, hour: d.hour.toISOString(), digestHash: d.digestHash, kid: d.kid, signature: d.signature }
}

interface DigestQuery {
  since?: string | undefined
  until?: string | undefined
  limit: number
  cursor?: string | undefined
}

export interface AuditProofService {
  signingKeys(): Promise<components['schemas']['AuditSigningKeyList']>
  digests(workspaceId: string, q: DigestQuery): Promise<components['schemas']['AuditDigestList']>
}

export function createAuditProofService (deps: Pick<Ports, 'db'>): AuditProofService {
  return {
    async signingKeys () {
      return { items: (await listSigningKeys(deps.db)).map(keyView) }
    },
    async digests (workspaceId, q) {
      // The position is the digest's hour (one a workspace): the cursor's date.
      const after = q.cursor !== undefined ? decodeCursor(q.cursor).createdAt : null
      const rows = await listDigests(deps.db, {
        workspaceId,
        since: queryInstant('since', q.since) ?? null,
        until: queryInstant('until', q.until) ?? null,
        after,
        limit: q.limit + 1
      })
      const { page, nextCursor } = pageOf(rows, q.limit, r => ({ createdAt: r.hour, id: r.lastId }))
      return { items: page.map(digestView), nextCursor }
    }
  }
}

/** Re-seals the signing keys a previous secret sealed (npm run secrets:reencrypt). */
export async function resealSigningKeys (db: Queryable, config: SecretSettings): Promise<ResealCount> {
  return await resealStore({
    store: 'audit signing keys',
    ring: signingKeyring(config),
    rows: pages<SealedSigningKey>(async (after, limit) => await listSealedSigningKeys(db, after?.id ?? null, limit)),
    contexts: { privateKeyEnc: context },
    write: async (kid, _column, from, to) => await resealSigningKey(db, kid, from, to)
  })
}
