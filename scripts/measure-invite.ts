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
import { databaseOptions, startMeasuredApp } from './lib/measure-peers.js'
import { insertUser } from '../src/db/users.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'

const { values } = parseArgs({
  options: {
    ...databaseOptions,
    n: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '20' },
    'data-dir': { type: 'string' }
  },
  strict: true
})
const n = Number(values.n)
const warmup = Number(values.warmup)
// The SMTP peer accepts and discards (counting), like a relay that answers quickly.
const { app, db, base, smtp, workspaceId, close } = await startMeasuredApp({
  db: values.db, url: values.url, dataDir: values['data-dir'] ?? null, env: { INVITE_EMAILS_PER_HOUR: '100000' }
})

const now = new Date()
const user = await insertUser(
  db,
  {
    workspaceId,
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

await close()
process.exit(failures === 0 ? 0 : 1)
