import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { chainedRecords } from '../helpers/audit-chain.js'
import { uuidV7Source } from '../../src/lib/uuid.js'
import { verifyLines } from '../../src/audit/verify.js'
import { insertAuditRows } from '../helpers/audit-rows.js'

// Retention of the audit trail (issue 55, item 3): `auditRetentionDays` (30 or more, null: for
// good, the default) set through the workspace settings; the sweep deletes the older records from
// the chain's start and records the deletion (`audit.records_deleted`: count, bounds, the last
// deleted hash); what remains verifies from that anchor, and an export made before the deletion
// still verifies. PGlite, or PostgreSQL with TEST_DATABASE_URL.

const DAY = 86_400_000
const h = await build(t)
const admin = await h.signIn({ role: 'admin' })
const newId = uuidV7Source()
const SETTINGS = '/api/workspace/settings'

const record = chainedRecords(h, admin.workspaceId, 'retention test')

async function exportLines (): Promise<string[]> {
  // A session of now: the clock moves by weeks here.
  const { cookie } = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const res = await h.inject({ url: '/api/audit-events/export', headers: { cookie } })
  return res.body.split('\n').filter(l => l !== '')
}

t.test('the setting: null by default, 30 days at least, changes audited', async t => {
  const get = await h.inject({ url: SETTINGS, headers: { cookie: admin.cookie } })
  assertContract(t, 'GET', SETTINGS, get)
  t.equal(get.json().auditRetentionDays, null, 'kept for good until set')
  const short = await h.inject({ method: 'PATCH', url: SETTINGS, headers: { cookie: admin.cookie }, payload: { auditRetentionDays: 29 } })
  assertContract(t, 'PATCH', SETTINGS, short)
  t.equal(short.statusCode, 400)
  t.match(short.json().details.errors, [{ in: 'body', field: 'auditRetentionDays' }])
  const set = await h.inject({ method: 'PATCH', url: SETTINGS, headers: { cookie: admin.cookie }, payload: { auditRetentionDays: 30 } })
  assertContract(t, 'PATCH', SETTINGS, set)
  t.equal(set.json().auditRetentionDays, 30)
  const back = await h.inject({ method: 'PATCH', url: SETTINGS, headers: { cookie: admin.cookie }, payload: { auditRetentionDays: null } })
  t.equal(back.json().auditRetentionDays, null)
  const trail = await h.inject({ url: '/api/audit-events?action=workspace.settings_changed', headers: { cookie: admin.cookie } })
  t.match(trail.json().items.map((e: { payload: unknown }) => e.payload), [
    { auditRetentionDays: { from: 30, to: null } }, { auditRetentionDays: { from: null, to: 30 } }
  ])
})

t.test('the sweep deletes the old records, records it, and both exports verify', async t => {
  const old: string[] = []
  for (let i = 0; i < 5; i++) old.push(await record(i))
  // A record older than the chain (written before the upgrade) goes too.
  await insertAuditRows(h.db, [{
    id: newId(new Date(h.clock.now().getTime() - DAY)),
    workspaceId: admin.workspaceId,
    action: 'invitation.created',
    actorType: 'system',
    actorId: null,
    actorLabel: null,
    targetType: null,
    targetId: null,
    payload: {},
    createdAt: new Date(h.clock.now().getTime() - DAY),
    source: 'system'
  }])
  h.clock.advance(31 * DAY)
  const kept = [await record(10), await record(11)]
  const before = await exportLines()
  const { cookie } = await h.signIn({ role: 'admin', workspaceId: admin.workspaceId })
  const set = await h.inject({ method: 'PATCH', url: SETTINGS, headers: { cookie }, payload: { auditRetentionDays: 30 } })
  t.equal(set.statusCode, 200)

  // The settings records of the first test are older than 30 days too: they are the chain's start.
  const doomed = before.map(l => JSON.parse(l)).filter(r => r.hash !== null && !kept.includes(r.id))
  await h.app.retention.sweep()
  const after = (await exportLines()).map(l => JSON.parse(l))
  t.notOk(after.some(r => old.includes(r.id) || r.hash === null), 'the old records are gone, chained or not')
  t.ok(kept.every(id => after.some(r => r.id === id)), 'the recent ones stay')
  const deletion = after.find(r => r.action === 'audit.records_deleted')
  t.match(deletion, {
    actor: { type: 'system', label: 'audit retention' },
    payload: {
      count: doomed.length + 1,
      fromSequence: 1,
      toSequence: doomed.length,
      lastHash: doomed.at(-1).hash,
      retentionDays: 30
    }
  })
  const firstKept = after.find(r => r.id === kept[0])
  t.equal(firstKept.previousHash, deletion.payload.lastHash, 'the first record kept links to the last deleted')

  const now = await verifyLines(after.map(r => JSON.stringify(r)))
  t.same(now.findings, [], 'what remains verifies')
  t.match(now.notes.join('\n'), /after the records that record \S+ \(audit\.records_deleted\) says retention deleted/)
  const earlier = await verifyLines(before)
  t.same(earlier.findings, [], 'the export made before the deletion still verifies')

  await h.app.retention.sweep()
  const again = (await exportLines()).map(l => JSON.parse(l))
  t.equal(again.filter(r => r.action === 'audit.records_deleted').length, 1, 'a sweep that deletes nothing records nothing')
})
