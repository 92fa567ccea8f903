import { parseArgs } from 'node:util'
import { openDatabase, type Queryable } from '../src/db/client.js'
import { loadConfig } from '../src/config.js'
import { projectRoot } from '../src/paths.js'

// Invitations for the list-page scenario, written in one set-based statement per batch (100k rows
// in seconds, not one INSERT per row): a workspace's history as the service would have left it —
// mostly pending (a third past expiry, read as expired), then accepted, revoked and expired ones,
// each with a distinct e-mail and token hash, spread over the last 30 days. `ANALYZE` after, so
// the planner sees the table as it is.
//
//   tsx bench/seed.ts --workspace NAME --invitations 100000   (env: DATA_DIR / DATABASE_URL, as the service)
// (run between create-admin and the service's start: the workspace exists, its admin not yet.)

const BATCH = 50_000

export async function seedInvitations (
  db: Queryable, workspaceId: string, invitedBy: string | null, count: number
): Promise<void> {
  for (let from = 1; from <= count; from += BATCH) {
    const to = Math.min(count, from + BATCH - 1)
    await db.query(
      `INSERT INTO invitations (workspace_id, email, role, status, token_hash, expires_at, invited_by,
         delivery_status, delivery_attempts, last_sent_at, accepted_at, revoked_at, created_at, updated_at)
       SELECT $1::uuid, 'seed-' || i || '@bench.test', CASE WHEN i % 10 = 0 THEN 'admin' ELSE 'member' END, s.status,
         CASE WHEN s.status = 'pending' THEN md5('t' || i || $1::text) || md5('u' || i || $1::text) END,
         t.created + interval '7 days', $2::uuid, 'sent', 1, t.created,
         CASE WHEN s.status = 'accepted' THEN t.created + interval '1 day' END,
         CASE WHEN s.status = 'revoked' THEN t.created + interval '2 days' END,
         t.created, t.created
       FROM generate_series($3::int, $4::int) AS i,
         LATERAL (SELECT now() - (i % 43200) * interval '1 minute' AS created) AS t,
         LATERAL (SELECT CASE i % 10 WHEN 7 THEN 'accepted' WHEN 8 THEN 'revoked' WHEN 9 THEN 'expired'
           ELSE 'pending' END AS status) AS s`,
      [workspaceId, invitedBy, from, to]
    )
  }
  if (count > 0) await db.query('ANALYZE invitations')
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: { workspace: { type: 'string' }, invitations: { type: 'string', default: '100000' } },
    strict: true
  })
  const config = loadConfig(process.env, { root: projectRoot })
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  try {
    const found = await db.query<{ id: string }>('SELECT id FROM workspaces WHERE name = $1', [values.workspace])
    const row = found.rows[0]
    if (row === undefined) throw new Error(`seed: no workspace named ${String(values.workspace)}`)
    await seedInvitations(db, row.id, null, Number(values.invitations))
  } finally {
    await db.close()
  }
}

if (process.argv[1]?.endsWith('seed.ts') === true) await main()
