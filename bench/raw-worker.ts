import { randomBytes } from 'node:crypto'
import { parseArgs } from 'node:util'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { insertUser } from '../src/db/users.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { projectRoot } from '../src/paths.js'
import { percentile } from './load.js'

// The "raw work" of an invitation, forked by bench/servers.ts, one per database: what
// POST /api/users/invite does minus HTTP — the session cookie's authentication and the invitation
// service's own `invite` (budget → transaction: user check, upsert, audit → delivery over SMTP),
// called in a closed loop at the benchmark's concurrency. The app is built by buildApp from the
// same environment as the measured service, so the database, pool, mailer and budget are the
// service's own; a change of the invite's SQL or order changes both sides of the ratio.
//
//   (forked) tsx bench/raw-worker.ts --smtp <url> --data-dir <dir> [--database-url <url>]
// Messages: {type:'run', durationMs, connections} → {type:'result', rps, p50, p99, total, errors};
// {type:'stop'} closes and exits.

const { values } = parseArgs({
  options: {
    smtp: { type: 'string' },
    'database-url': { type: 'string' },
    'data-dir': { type: 'string' }
  },
  strict: true
})
if (values.smtp === undefined) throw new Error('raw worker: --smtp is required')

const config = loadConfig({
  APP_ENV: 'local',
  LOG_LEVEL: 'warn',
  SMTP_URL: values.smtp,
  SESSION_SECRET: randomBytes(32).toString('base64url'),
  INVITE_EMAILS_PER_HOUR: '100000',
  ...(values['database-url'] !== undefined ? { DATABASE_URL: values['database-url'] } : {}),
  ...(values['data-dir'] !== undefined ? { DATA_DIR: values['data-dir'] } : {})
}, { root: projectRoot })
const app = await buildApp({ config })
await app.ready()
const { db, services } = app

// An admin with a session of its own, in a workspace of its own.
const now = new Date()
const workspace = await insertWorkspace(db, { name: 'Raw bench', now })
const adminEmail = `raw-admin-${randomBytes(4).toString('hex')}@bench.test`
const admin = await insertUser(db, {
  workspaceId: workspace.id, email: adminEmail, name: 'Raw Admin', role: 'admin', now
})
const { token } = await services.sessions.start(db, admin.id, 'signup')
let n = 0

/** One invitation as the route runs it: the cookie's principal, then the service. */
async function inviteOnce (): Promise<void> {
  const principal = await services.sessions.authenticate(token)
  if (principal === null) throw new Error('raw: the session does not authenticate')
  await services.invitations.invite(principal, { email: `raw-${process.pid}-${++n}@bench.test`, role: 'member' })
}

async function run (durationMs: number, connections: number): Promise<void> {
  const latencies: number[] = []
  let errors = 0
  const started = performance.now()
  const end = started + durationMs
  // Closed loop at the same concurrency as autocannon's connections.
  await Promise.all(Array.from({ length: connections }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      try { await inviteOnce() } catch { errors++ }
      latencies.push(performance.now() - t0)
    }
  }))
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const [p50, p99] = [percentile(latencies, 50), percentile(latencies, 99)]
  process.send?.({ type: 'result', rps: latencies.length / seconds, p50, p99, total: latencies.length, errors })
}

const fail = (err: Error): void => { process.stderr.write(`raw worker: ${err.message}\n`); process.exit(1) }
process.on('message', (m: { type: string, durationMs?: number, connections?: number }) => {
  if (m.type === 'stop') app.close().then(() => process.exit(0), fail)
  if (m.type === 'run') run(m.durationMs ?? 1000, m.connections ?? 10).catch(fail)
})
process.send?.({ type: 'ready' })
