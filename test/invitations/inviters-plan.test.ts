import t from 'tap'
import { findInviters } from '../../src/db/invitations.js'
import { seedInvitations } from '../../bench/scale-seed.js'
import { build } from '../helpers/build.js'
import { planOf, recording } from '../helpers/plans.js'

// The invitations list names each invitation's inviter from its invitation.created audit row
// (findInviters). The embedded database runs no autovacuum, so between two retention sweeps
// (which refresh the statistics of grown tables, src/housekeeping/statistics.ts) a workspace's
// audit rows grow while the planner still takes the table for empty. Seen in the benchmark: after
// 1,000 invites, a list page cost 70 ms of CPU instead of 3, and more with every invite, because
// the audit table was probed by workspace alone for each invitation of the page. Here: 600
// invitations with their audit rows and 2,000 newer sign-ins, never analyzed, and a page of 50
// must read one audit row per invitation, not 50 × the workspace's trail.

t.test('a page of invitations reads one audit row per invitation, the audit trail never analyzed', async t => {
  const h = await build(t)
  const admin = await h.signIn()
  const ws = admin.workspaceId
  // Statistics taken while another workspace held the invitations (as in a data directory seeded or
  // analyzed before this workspace grew); the audit trail's never.
  const other = await h.signIn()
  await seedInvitations(h.db, { workspaceIds: [other.workspaceId], from: 0, to: 600, now: h.clock.now() })
  await h.db.query('ANALYZE invitations')
  await seedInvitations(h.db, { workspaceIds: [ws], from: 0, to: 600, now: h.clock.now() })
  await h.db.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, event_type, source)
     SELECT uuid_v7_at(i.created_at), i.workspace_id, 'invitation.created', 'user', $2, $3, 'invitation', i.id::text,
            '{}'::jsonb, i.created_at, 'invitation.created', 'api'
       FROM invitations i WHERE i.workspace_id = $1`, [ws, admin.userId, admin.email])
  // And what else a workspace's trail holds, newer than those: 2,000 sign-ins. A plan that walks
  // the workspace's audit rows newest first, filtering for the invitation, reads them all.
  await h.db.query(
    `INSERT INTO audit_events (id, workspace_id, action, actor_type, actor_id, actor_label, target_type, target_id,
                               payload, created_at, source)
     SELECT uuid_v7_at(now() + g * interval '1 second'), $1, 'session.login', 'user', $2, $3, 'session',
            gen_random_uuid()::text, '{}'::jsonb, now() + g * interval '1 second', 'web'
       FROM generate_series(1, 2000) g`, [ws, admin.userId, admin.email])
  const page = (await h.db.query<{ id: string }>(
    'SELECT id FROM invitations WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT 50', [ws]
  )).rows.map(r => r.id)

  // The statement as the repository sends it, then EXPLAIN ANALYZE of the same text and parameters.
  const { q, sent } = recording(h.db)
  const found = await findInviters(q, ws, { invitationIds: page })
  t.equal(found.length, 50, 'every invitation of the page has its inviter')
  t.ok(found.every(f => f.inviter.email === admin.email && f.inviter.source === 'api' && f.inviter.type === 'user'),
    'the audit row\'s actor and door')
  const [statement] = sent
  if (statement === undefined) throw new Error('findInviters sent no statement')
  const nodes = await planOf(h.db, statement, { analyze: true })
  const auditRead = nodes
    .filter(n => n['Relation Name'] === 'audit_events')
    .reduce((sum, n) => sum + ((n['Actual Rows'] ?? 0) + (n['Rows Removed by Filter'] ?? 0)) * (n['Actual Loops'] ?? 1), 0)
  const joinFiltered = nodes.reduce((sum, n) => sum + (n['Rows Removed by Join Filter'] ?? 0), 0)
  t.ok(auditRead <= 2 * page.length, `audit rows read for a page of ${page.length}: ${auditRead}`)
  t.ok(joinFiltered <= page.length, `rows a join read and threw away: ${joinFiltered}`)
})
