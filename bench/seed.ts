import { parseArgs } from 'node:util'
import { openDatabase, type Queryable } from '../src/db/client.js'
import { loadConfig } from '../src/config.js'
import { projectRoot } from '../src/paths.js'
import { seedInvitations, seedMembers } from './scale-seed.js'

// The list page's workspace history (bench/scale-seed.ts's set-based invitations: every status,
// as the service leaves them), then ANALYZE so the planner sees the table as it is. The service's
// workspace is seeded between create-admin and its start (PGlite: one process at a time), when it
// has no user yet: one member is made first, as the invitations' inviter.
//
//   tsx bench/seed.ts --workspace NAME --invitations 100000 [--members 10000]
//   (env: DATA_DIR / DATABASE_URL, as the service)

/** `count` invitations in workspace `workspaceId`, 30 s apart, the newest now. */
export async function seedWorkspaceInvitations (q: Queryable, workspaceId: string, count: number): Promise<void> {
  if (count <= 0) return
  const now = new Date()
  const users = await q.query(
    'SELECT 1 FROM users WHERE workspace_id = $1 AND status = $2 LIMIT 1', [workspaceId, 'active']
  )
  if (users.rowCount === 0) await seedMembers(q, { workspaceIds: [workspaceId], count: 1, now })
  await seedInvitations(q, { workspaceIds: [workspaceId], from: 0, to: count, now })
  await q.query('ANALYZE invitations')
}

async function main (): Promise<void> {
  const { values } = parseArgs({
    options: {
      workspace: { type: 'string' },
      invitations: { type: 'string', default: '100000' },
      members: { type: 'string', default: '0' }
    },
    strict: true
  })
  const config = loadConfig(process.env, { root: projectRoot })
  const db = await openDatabase({ url: config.databaseUrl, dataDir: config.dataDir })
  try {
    const found = await db.query<{ id: string }>('SELECT id FROM workspaces WHERE name = $1', [values.workspace])
    const row = found.rows[0]
    if (row === undefined) throw new Error(`seed: no workspace named ${String(values.workspace)}`)
    // --members: the console's Members screen over a large workspace (bench/console.ts).
    const members = Number(values.members)
    if (members > 0) {
      await seedMembers(db, { workspaceIds: [row.id], count: members, now: new Date() })
      await db.query('ANALYZE users')
    }
    await seedWorkspaceInvitations(db, row.id, Number(values.invitations))
  } finally {
    await db.close()
  }
}

if (process.argv[1]?.endsWith('seed.ts') === true) await main()
