import { openDatabase, type Database } from '../src/db/client.js'
import { migrate } from '../src/db/migrate.js'
import { invitationFunnel } from '../src/db/invitations.js'
import { seedInvitations, seedWorkspaces } from './scale-seed.js'
import { throwawayDatabase } from './servers.js'

// `npm run bench -- --funnel`: what GET /api/invitations/funnel costs its database, on PostgreSQL.
// A throwaway database with one workspace of 1M invitations (30 s apart: the newest 30 days hold
// 86k of them, a year all of them) beside 999 workspaces of 20, seeded set-based as the service
// writes them (bench/scale-seed.ts: four in ten sent ones viewed), then VACUUM ANALYZE (the state
// autovacuum leaves). The service's own statement (invitationFunnel, src/db/invitations.ts) runs
// `runs` times per period; printed: median and max, and the plan of the widest one.

const write = (s: string): void => { process.stdout.write(s) }

async function timed (db: Database, workspaceId: string, since: Date, until: Date, runs: number): Promise<number[]> {
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    await invitationFunnel(db, { workspaceId, since, until, now: until })
    ms.push(performance.now() - t)
  }
  return ms.sort((a, b) => a - b)
}

export async function runFunnel (o: { pgUrl: string, invitations: number, runs: number }): Promise<void> {
  const database = await throwawayDatabase(o.pgUrl, 'bench_funnel')
  const long = { queryTimeoutMs: 600_000, transactionTimeoutMs: 600_000 }
  const db = await openDatabase({ url: database.url, dataDir: null, ...long })
  try {
    await migrate(db)
    const now = new Date()
    const [big] = await seedWorkspaces(db, { count: 1000, now })
    if (big === undefined) throw new Error('funnel: no workspace seeded')
    const others = (await db.query<{ id: string }>('SELECT id FROM workspaces WHERE id <> $1', [big]))
      .rows.map(r => r.id)
    await seedInvitations(db, { workspaceIds: others, from: 0, to: 20, now })
    for (let k = 0; k < o.invitations; k += 100_000) {
      const t = Date.now()
      const to = Math.min(o.invitations, k + 100_000)
      await seedInvitations(db, { workspaceIds: [big], from: k, to, now })
      write(`  seeded ${to.toLocaleString('en')} invitations (${Date.now() - t} ms)\n`)
    }
    await db.exec('VACUUM ANALYZE')
    const day = 86_400_000
    const periods: Array<[string, number]> = [['7 days', 7], ['30 days', 30], ['365 days (all)', 365]]
    write(`funnel over ${o.invitations.toLocaleString('en')} invitations in one workspace, ${o.runs} runs each\n`)
    for (const [name, days] of periods) {
      const since = new Date(now.getTime() - days * day)
      const until = new Date(now.getTime() + 1000)
      const ms = await timed(db, big, since, until, o.runs)
      const counts = await invitationFunnel(db, { workspaceId: big, since, until, now: until })
      write(`  ${name.padEnd(16)} median ${(ms[Math.floor(ms.length / 2)] ?? 0).toFixed(1)} ms, ` +
        `max ${(ms[ms.length - 1] ?? 0).toFixed(1)} ms  ${JSON.stringify(counts)}\n`)
    }
    // The statement as the service sends it, EXPLAINed with its own parameters, for each period.
    for (const [name, days] of periods) {
      let sent: { text: string, params: readonly unknown[] } | null = null
      const recording = {
        query: async (text: string, params?: unknown[]) => {
          sent = { text, params: params ?? [] }
          return await db.query(text, params)
        },
        exec: async (text: string) => { await db.exec(text) }
      }
      await invitationFunnel(recording as unknown as Database, {
        workspaceId: big, since: new Date(now.getTime() - days * day), until: now, now
      })
      const probe = sent as { text: string, params: readonly unknown[] } | null
      if (probe === null) throw new Error('funnel: no statement recorded')
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT TEXT) ${probe.text}`, [...probe.params]
      )
      const lines = plan.rows.map(r => r['QUERY PLAN']).filter(l => /Scan|Heap Fetches|Execution Time/.test(l))
      write(`  plan, ${name}:\n${lines.map(l => `    ${l.trim()}`).join('\n')}\n`)
    }
  } finally {
    await db.close()
    await database.drop()
  }
}
