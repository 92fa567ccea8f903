import t from 'tap'
import { randomBytes } from 'node:crypto'
import { build, testConfig } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { createApiKey } from '../helpers/mcp.js'
import { chainedRecords } from '../helpers/audit-chain.js'
import { signClosedHours } from '../../src/audit/digests.js'
import { verifyLines } from '../../src/audit/verify.js'
import { verifyDigests } from '../../src/audit/verify-digests.js'
import { reencryptStored } from '../../src/housekeeping/reencrypt.js'

// Signed hourly digests (issue 55, item 4): per workspace and closed hour, the chain's new segment
// signed with the service's Ed25519 key; the keys published (GET /api/audit-events/signing-keys),
// the digests read (GET /api/audit-events/digests) by admins and audit:read keys; the private key
// sealed at rest and re-sealed by secrets:reencrypt; a key replaced after 90 days and still listed;
// and the digests, checked with an export, show what the file alone cannot: a record removed from
// the end of the chain. PGlite, or PostgreSQL with TEST_DATABASE_URL.

const HOUR = 3_600_000
const h = await build(t)
const admin = await h.signIn({ role: 'admin' })
const deps = { db: h.db, config: h.config, clock: h.clock, log: h.app.log }

const record = chainedRecords(h, admin.workspaceId, 'digest test')

async function get (url: string, headers: Record<string, string> = {}) {
  const { cookie } = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const res = await h.inject({ url, headers: { cookie, ...headers } })
  assertContract(t, 'GET', url.split('?')[0] as string, res)
  return res
}

/** To the next hour's fifth minute, when the job runs. */
function toNextHour (): void {
  const now = h.clock.now().getTime()
  h.clock.advance(HOUR - now % HOUR + 5 * 60_000)
}

t.test('each closed hour is signed, the digests chain, and an export verifies against them', async t => {
  const ids = [await record(1), await record(2), await record(3)]
  t.equal(await signClosedHours(deps), 0, 'the hour is not closed yet')
  toNextHour()
  t.equal(await signClosedHours(deps), 1)
  t.equal(await signClosedHours(deps), 0, 'an hour is signed once')
  ids.push(await record(4), await record(5))
  toNextHour()
  t.equal(await signClosedHours(deps), 1)

  const keys = (await get('/api/audit-events/signing-keys')).json().items
  t.match(keys, [{ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', retiredAt: null }])
  const digests = (await get('/api/audit-events/digests')).json()
  t.match(digests.items, [
    {
      firstSequence: 1,
      lastSequence: 3,
      firstId: ids[0],
      lastId: ids[2],
      count: 3,
      previousDigestHash: null,
      kid: keys[0].kid
    },
    { firstSequence: 4, lastSequence: 5, firstId: ids[3], lastId: ids[4], count: 2 }
  ])
  t.equal(digests.items[1].previousDigestHash, digests.items[0].digestHash, 'the digests chain')
  const paged = (await get('/api/audit-events/digests?limit=1')).json()
  t.equal(paged.items.length, 1)
  const next = (await get(`/api/audit-events/digests?limit=1&cursor=${paged.nextCursor as string}`)).json()
  t.same(next.items, [digests.items[1]], 'the next page')

  const sealed = await h.db.query<{ enc: string }>('SELECT private_key_enc AS enc FROM audit_signing_keys')
  // The DER of an Ed25519 key names its algorithm by OID 1.3.101.112: 06 03 2b 65 70.
  t.notOk(Buffer.from(sealed.rows[0]?.enc ?? '', 'base64').includes(Buffer.from('06032b6570', 'hex')),
    'the private key is sealed: no Ed25519 key structure readable in the database')

  const exportLines = async () => (await get('/api/audit-events/export')).body.split('\n').filter(l => l !== '')
  const report = await verifyLines(await exportLines())
  t.same([...report.findings, ...verifyDigests(report, digests.items, keys)], [], 'the export and its digests agree')

  // The last record of the chain removed: the file alone cannot tell; the digest does.
  await h.db.query('DELETE FROM audit_events WHERE id = $1', [ids[4]])
  const cut = await verifyLines(await exportLines())
  t.same(cut.findings, [], 'the chain in the file still links')
  t.match(verifyDigests(cut, digests.items, keys), [
    { kind: 'digest', message: new RegExp(`last record ${ids[4] as string} \\(sequence 5\\) is not in the file: removed`) },
    { kind: 'digest', message: /1 of its 2 records are not in the file: removed/ }
  ])
  const forged = { ...digests.items[0], count: 4 }
  t.match(verifyDigests(report, [forged], keys), [{ message: /signature does not verify/ }])
})

t.test('who may read: admins and audit:read keys', async t => {
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  for (const url of ['/api/audit-events/signing-keys', '/api/audit-events/digests']) {
    const refused = await h.inject({ url, headers: { cookie: member.cookie } })
    assertContract(t, 'GET', url, refused)
    t.equal(refused.statusCode, 403)
    const { secret } = await createApiKey(h, admin, 'auditor', ['audit:read'])
    const res = await h.inject({ url, headers: { authorization: `Bearer ${secret}` } })
    assertContract(t, 'GET', url, res)
    t.equal(res.statusCode, 200)
    const anonymous = await h.inject({ url })
    t.equal(anonymous.statusCode, 401)
  }
  const bad = await h.inject({ url: '/api/audit-events/digests?cursor=nope!', headers: { cookie: admin.cookie } })
  t.equal(bad.statusCode, 400)
})

t.test('the key is re-sealed by secrets:reencrypt, and replaced after 90 days but still listed', async t => {
  const rotated = testConfig({ SESSION_SECRET: randomBytes(32).toString('hex'), SESSION_SECRET_PREVIOUS: h.config.session.secret })
  const counts = await reencryptStored({ db: h.db, config: rotated })
  t.match(counts.find(c => c.store === 'audit signing keys'), { rewritten: 1, unreadable: 0 })
  await record(6)
  toNextHour()
  const onlyNew = testConfig({ SESSION_SECRET: rotated.session.secret })
  t.equal(await signClosedHours({ ...deps, config: onlyNew }), 1, 'the re-sealed key opens under the new secret alone')

  h.clock.advance(91 * 24 * HOUR)
  await record(7)
  toNextHour()
  t.equal(await signClosedHours({ ...deps, config: onlyNew }), 1)
  const keys = (await get('/api/audit-events/signing-keys')).json().items
  t.equal(keys.length, 2)
  t.equal(keys[0].retiredAt, null, 'the new key signs')
  t.not(keys[1].retiredAt, null, 'the old one is retired, and listed')
  const digests = (await get('/api/audit-events/digests?limit=100')).json().items
  t.same(new Set(digests.map((d: { kid: string }) => d.kid)), new Set(keys.map((k: { kid: string }) => k.kid)))
  const report = await verifyLines((await get('/api/audit-events/export')).body.split('\n').filter(l => l !== ''))
  t.match(verifyDigests(report, digests, keys).filter(f => !/not in the file/.test(f.message)), [],
    'digests of both keys verify')
})
