import t from 'tap'
import { build } from '../helpers/build.js'
import { insertAuditEvent, insertAuditEvents, type AuditEntry } from '../../src/db/audit-events.js'
import { systemActor } from '../../src/audit/actor.js'
import { uuidV7Source } from '../../src/lib/uuid.js'
import { recordHash } from '../../src/lib/audit-chain.js'
import { toAuditEventView } from '../../src/audit/view.js'
import { verifyLines } from '../../src/audit/verify.js'
import { listAuditEventsAfter } from '../../src/db/audit-events.js'

// The audit trail's hash chain (issue 55, item 4): every way a record is written — one through an
// operation, one alone outside a transaction, a batch — continues its workspace's chain (sequence
// 1, 2, 3…, each previousHash the hash before, each hash recomputable from the export line), two
// workspaces chain apart, and 20 concurrent writers never fork it. PGlite, or PostgreSQL with
// TEST_DATABASE_URL (where the writers really run at once, each on its own connection).

const h = await build(t)
const admin = await h.signIn({ role: 'admin' })
const other = await h.signIn({ role: 'admin', workspaceName: 'Other' })
const newId = uuidV7Source()

function entry (workspaceId: string, n: number): AuditEntry {
  return {
    workspaceId,
    action: 'workspace.settings_changed',
    actor: systemActor('chain test'),
    target: { type: 'workspace', id: workspaceId },
    payload: { n, name: { from: 'é "quoted"', to: '\u2028 ☃' }, undef: undefined, at: new Date(0) },
    now: h.clock.now()
  }
}

function batch (workspaceId: string, ns: number[]) {
  return ns.map(n => ({ id: newId(h.clock.now()), entry: entry(workspaceId, n), eventType: null }))
}

async function chainOf (workspaceId: string) {
  const rows = await listAuditEventsAfter(h.db, { workspaceId, after: null, limit: 10_000 })
  return rows.map(toAuditEventView).sort((a, b) => (a.sequence ?? 0) - (b.sequence ?? 0))
}

t.test('an operation, a lone insert and a batch continue one chain per workspace', async t => {
  const res = await h.inject({
    method: 'PATCH', url: '/api/workspace/settings', headers: { cookie: admin.cookie }, payload: { name: 'Renamed' }
  })
  t.equal(res.statusCode, 200)
  await insertAuditEvent(h.db, newId(h.clock.now()), entry(admin.workspaceId, 1), null)
  await insertAuditEvent(h.db, newId(h.clock.now()), entry(other.workspaceId, 1), null)
  await h.db.transaction(async tx => {
    await insertAuditEvents(tx, batch(admin.workspaceId, [1, 2, 3]))
  })
  await insertAuditEvent(h.db, newId(h.clock.now()), entry(admin.workspaceId, 4), null)

  const chain = await chainOf(admin.workspaceId)
  t.same(chain.map(r => r.sequence), [1, 2, 3, 4, 5, 6])
  t.equal(chain[0]?.previousHash, null, 'the first record starts the chain')
  for (const [i, r] of chain.entries()) {
    t.equal(r.workspaceId, admin.workspaceId)
    if (i > 0) t.equal(r.previousHash, chain[i - 1]?.hash, `record ${i + 1} links to the one before`)
    t.equal(recordHash({ ...r, workspaceId: r.workspaceId ?? '', previousHash: r.previousHash ?? null }), r.hash, `record ${i + 1}'s hash recomputes`)
  }
  const report = await verifyLines(chain.map(r => JSON.stringify(r)))
  t.same(report.findings, [])
  t.equal(report.records, 6)

  const apart = await chainOf(other.workspaceId)
  t.same(apart.map(r => [r.sequence, r.previousHash]), [[1, null]], 'another workspace has a chain of its own')
})

t.test('a batch outside a transaction is refused: its lock would not hold', async t => {
  await t.rejects(insertAuditEvents(h.db, batch(admin.workspaceId, [9])),
    /inside a transaction/)
})

t.test('20 concurrent writers, lone and batched, never fork the chain', async t => {
  const fresh = await h.signIn({ role: 'admin', workspaceName: 'Busy' })
  await Promise.all(Array.from({ length: 20 }, async (_, w) => {
    for (let k = 0; k < 5; k++) {
      await h.db.transaction(async tx => {
        if ((w + k) % 3 === 0) {
          await insertAuditEvents(tx, batch(fresh.workspaceId, [0, 1]))
        } else {
          await insertAuditEvent(tx, newId(h.clock.now()), entry(fresh.workspaceId, w), null)
        }
      })
    }
  }))
  const chain = await chainOf(fresh.workspaceId)
  let expected = 0
  for (let w = 0; w < 20; w++) for (let k = 0; k < 5; k++) expected += (w + k) % 3 === 0 ? 2 : 1
  t.equal(chain.length, expected)
  t.same(chain.map(r => r.sequence), Array.from({ length: expected }, (_, i) => i + 1), 'one place each, no gap')
  const report = await verifyLines(chain.map(r => JSON.stringify(r)))
  t.same(report.findings, [], 'every link holds')
  const head = await h.db.query<{ seq: number, hash: string }>(
    'SELECT last_seq::float8 AS seq, last_hash AS hash FROM audit_chain_heads WHERE workspace_id = $1', [fresh.workspaceId])
  t.same(head.rows[0], { seq: expected, hash: chain.at(-1)?.hash }, 'the head is the last record')
})
