// Latency of POST /api/users/invite on the fallback path: N sequential invites over real HTTP
// (loopback, keep-alive) to the app as production builds it, each sending its e-mail through a
// real SMTP server on loopback. Reports p50/p90/p99/max.
//
//   npx tsx scripts/measure-invite.ts                       # PGlite in memory, 1000 invites
//   npx tsx scripts/measure-invite.ts --data-dir /tmp/x     # PGlite on disk, as npm start runs it
//   npx tsx scripts/measure-invite.ts --db postgres --url postgres://postgres@127.0.0.1:5432/postgres
//   npx tsx scripts/measure-invite.ts --n 200 --warmup 20
import { parseArgs } from 'node:util'
import { randomBytes } from 'node:crypto'
import { buildApp } from '../src/app.js'
import { openMeasureDatabase, startSinkSmtp } from './lib/measure-peers.js'
import { loadConfig } from '../src/config.js'
import { insertWorkspace } from '../src/db/workspaces.js'
import { insertUser } from '../src/db/users.js'
import { projectRoot } from '../src/paths.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'pglite' },
    url: { type: 'string', default: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
    n: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '20' },
    'data-dir': { type: 'string' }
  },
  strict: true
})
const n = Number(values.n)
const warmup = Number(values.warmup)
if (values.db !== 'pglite' && values.db !== 'postgres') throw new Error('--db must be pglite or postgres')
const kind: 'pglite' | 'postgres' = values.db

// The SMTP peer: accepts and discards (counting), like a relay that answers quickly.
const smtp = await startSinkSmtp()
const smtpUrl = smtp.url
const { db, close: closeDatabase } = await openMeasureDatabase(kind, values.url, values['data-dir'] ?? null)

const config = loadConfig(
  { LOG_LEVEL: 'silent', SMTP_URL: smtpUrl, INVITE_EMAILS_PER_HOUR: '100000', APP_URL: 'https://app.example.test' },
  { root: projectRoot, ephemeral: true }
)
const app = await buildApp({ config, db, logger: false })
await app.listen({ port: 0, host: '127.0.0.1' })
const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`

const now = new Date()
const ws = await insertWorkspace(db, { name: 'Measure', now })
const user = await insertUser(
  db,
  {
    workspaceId: ws.id,
    email: `admin-${randomBytes(4).toString('hex')}@example.com`,
    name: 'Admin',
    role: 'admin',
    now
  }
)
const { token } = await app.services.sessions.start(db, user.id, 'signup')
const headers = { cookie: `${SESSION_COOKIE}=${token}`, 'content-type': 'application/json' }

const samples: number[] = []
let failures = 0
const started = performance.now()
for (let i = 0; i < warmup + n; i++) {
  const t0 = performance.now()
  const res = await fetch(
    `${base}/api/users/invite`,
    { method: 'POST', headers, body: JSON.stringify({ email: `invitee-${i}@example.com`, role: 'member' }) }
  )
  await res.arrayBuffer()
  const ms = performance.now() - t0
  if (res.status !== 200) failures++
  if (i >= warmup) samples.push(ms)
}
const wall = performance.now() - started

samples.sort((a, b) => a - b)
const pct = (p: number) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)] ?? NaN
const mean = samples.reduce((a, b) => a + b, 0) / samples.length
const f = (x: number) => x.toFixed(2)
console.log(JSON.stringify({
  database: db.kind,
  invites: n,
  warmup,
  non200: failures,
  emailsReceived: smtp.received(),
  ms: { p50: f(pct(50)), p90: f(pct(90)), p99: f(pct(99)), max: f(samples.at(-1) ?? NaN), mean: f(mean) },
  wallSeconds: f(wall / 1000),
  node: process.version
}, null, 2))

await app.close()
await closeDatabase()
await smtp.close()
process.exit(failures === 0 ? 0 : 1)
