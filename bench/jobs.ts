import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { openDatabase, type Database } from '../src/db/client.js'
import { migrate } from '../src/db/migrate.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { createEventOutbox } from '../src/events/outbox.js'
import type { EventOutbox } from '../src/ports/event-outbox.js'
import { startJobEngine } from '../src/jobs/engine.js'
import { projectRoot } from '../src/paths.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { throwawayDatabase } from './servers.js'

// `npm run bench -- --jobs`: commit-to-delivery of a webhook job with three instances on one
// PostgreSQL database (in this process, each its own pool and job engine, the default
// JOBS_POLL_MS), when the instance that committed cannot take the job:
//   - busy: its only webhook worker is held by a slow receiver for the whole run;
//   - gone: it runs no workers at all (as a script, or an instance that stopped after its commit).
// Either way only the NOTIFY sent at commit (src/jobs/engine.ts) wakes the other two before their
// poll. Each event is committed alone, one after another; the time runs from before the
// transaction begins to the request's arrival at a loopback receiver. Prints p50, p99 and max.

export interface JobBenchOptions { pgUrl: string, events: number }

const SECRET = 'bench-jobs-instances-'.repeat(2)
const percentile = (xs: number[], p: number): number => {
  const s = [...xs].sort((x, y) => x - y)
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)] ?? NaN
}

export async function runJobPickup (o: JobBenchOptions): Promise<void> {
  const throwaway = await throwawayDatabase(o.pgUrl, 'bench_jobs')
  const arrived = new Map<string, number>()
  const held: ServerResponse[] = []
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/slow') { held.push(res); return }
      arrived.set((JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id, performance.now())
      res.writeHead(204).end()
    })
  })
  receiver.listen(0, '127.0.0.1')
  await new Promise(resolve => receiver.once('listening', resolve))
  const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  const apps: FastifyInstance[] = []
  const dbs: Database[] = []
  const instance = async (): Promise<FastifyInstance> => {
    const config = loadConfig(
      { LOG_LEVEL: 'silent', DATABASE_URL: throwaway.url, SESSION_SECRET: SECRET, WEBHOOK_TIMEOUT_MS: '60000' },
      { root: projectRoot, ephemeral: true }
    )
    const db = await openDatabase({ url: throwaway.url, dataDir: null })
    dbs.push(db)
    const app = await buildApp({ config, db, logger: false })
    await app.ready()
    apps.push(app)
    return app
  }
  try {
    const migrated = await openDatabase({ url: throwaway.url, dataDir: null })
    dbs.push(migrated)
    await migrate(migrated)
    const a = await instance()
    const now = new Date()
    const ws = await insertWorkspace(a.db, { name: 'Bench', now })
    const admin = await insertUser(
      a.db, { workspaceId: ws.id, email: 'bench@example.com', name: null, role: 'admin', now }
    )
    const { token } = await a.services.sessions.start(a.db, admin.id, 'signup')
    for (const [path, type] of [['/slow', 'member.removed'], ['/hook', 'member.joined']] as const) {
      const res = await a.inject({
        method: 'POST',
        url: '/api/webhook-endpoints',
        headers: { cookie: `${SESSION_COOKIE}=${token}`, 'content-type': 'application/json' },
        payload: { url: hook + path, eventTypes: [type] }
      })
      if (res.statusCode !== 201) throw new Error(`endpoint: ${res.statusCode} ${res.body}`)
    }
    const record = async (outbox: EventOutbox, action: 'member.joined' | 'member.removed'): Promise<string> =>
      await a.db.transaction(async tx => await outbox.record(tx, {
        workspaceId: ws.id,
        action,
        actor: { type: 'system', id: null, label: 'bench', source: 'system', requestId: null },
        target: { type: 'user', id: admin.id },
        now: new Date()
      }))
    // a's webhook worker takes the slow delivery and is held there; then b and c start.
    await record(a.services.ports.events, 'member.removed')
    while (held.length === 0) await new Promise(resolve => setTimeout(resolve, 20))
    await instance()
    await instance()
    const committer = await startJobEngine({
      db: a.db,
      log: a.log,
      schema: a.config.jobs.schema,
      pollSeconds: 2,
      expireSeconds: 60,
      maintenanceSeconds: 60,
      workers: false
    })
    const scenarios: Array<[string, EventOutbox]> = [
      ['busy (its worker held)', a.services.ports.events],
      ['gone (no worker)', createEventOutbox(committer)]
    ]
    const poll = a.config.jobs.pollMs
    process.stdout.write(`commit to delivery, 3 instances, JOBS_POLL_MS=${poll}, ${o.events} events each\n`)
    for (const [name, outbox] of scenarios) {
      const took: number[] = []
      for (let i = 0; i < o.events; i++) {
        const started = performance.now()
        // The webhook's `id` is the audit row's id, prefixed (evt_…).
        const id = await record(outbox, 'member.joined')
        const deadline = Date.now() + 10_000
        while (!arrived.has(`evt_${id}`) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 2))
        took.push((arrived.get(`evt_${id}`) ?? NaN) - started)
      }
      const f = (ms: number): string => `${ms.toFixed(1)} ms`
      process.stdout.write(
        `  committing instance ${name}: p50 ${f(percentile(took, 0.5))}, p99 ${f(percentile(took, 0.99))}, ` +
        `max ${f(Math.max(...took))}, lost ${took.filter(Number.isNaN).length}\n`
      )
    }
    await committer.stop()
  } finally {
    for (const res of held) res.destroy()
    for (const app of apps) await app.close()
    for (const db of dbs) await db.close()
    receiver.closeAllConnections()
    receiver.close()
    await throwaway.drop()
  }
}
