// Timing of POST /api/auth/login-link for a known and an unknown address (account enumeration
// by timing): sequential blocks over real HTTP (loopback, keep-alive) to the app as production
// builds it, e-mails through a real SMTP server on loopback. Blocks alternate known / unknown;
// reports the median latency of each kind and the median of the per-pair differences.
//
//   npx tsx scripts/measure-login-link.ts                 # PGlite in memory, 40 pairs of 50
//   npx tsx scripts/measure-login-link.ts --db postgres --url postgres://postgres@127.0.0.1:5432/postgres
//   npx tsx scripts/measure-login-link.ts --blocks 20 --size 100
import { parseArgs } from 'node:util'
import { databaseOptions, startMeasuredApp } from './lib/measure-peers.js'
import { insertUser } from '../src/db/users.js'

const { values } = parseArgs({
  options: {
    ...databaseOptions,
    blocks: { type: 'string', default: '40' },
    size: { type: 'string', default: '50' }
  },
  strict: true
})
const blocks = Number(values.blocks)
const size = Number(values.size)
const { app, db, base, smtp, workspaceId, close } = await startMeasuredApp({
  db: values.db, url: values.url, dataDir: null, env: { AUTH_RATE_LIMIT_PER_MINUTE: '1000000' }
})

const now = new Date()
// Many known addresses, each asked for a few times, so most known requests really send a link
// (an address gets 5 links per 15 minutes) as an attacker probing a list would see.
const known = await Promise.all(Array.from({ length: Math.ceil((blocks * size) / 4) }, async (_, i) =>
  (await insertUser(
    db, { workspaceId, email: `known-${i}@example.com`, name: null, role: 'member', now }
  )).email))

let non202 = 0
let k = 0
let u = 0
async function timed (email: string): Promise<number> {
  const t0 = performance.now()
  const res = await fetch(
    `${base}/api/auth/login-link`,
    { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) }
  )
  await res.arrayBuffer()
  if (res.status !== 202) non202++
  return performance.now() - t0
}
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)] ?? NaN }

// Warm-up (JIT, connection), not counted.
for (let i = 0; i < 50; i++) await timed(i % 2 === 0 ? (known[0] as string) : `warm-${i}@example.com`)
const all = { known: [] as number[], unknown: [] as number[] }
const diffs: number[] = []
for (let b = 0; b < blocks; b++) {
  const kb: number[] = []
  const ub: number[] = []
  for (let i = 0; i < size; i++) kb.push(await timed(known[Math.floor(k++ / 4) % known.length] as string))
  for (let i = 0; i < size; i++) ub.push(await timed(`unknown-${u++}@example.com`))
  all.known.push(...kb)
  all.unknown.push(...ub)
  diffs.push(median(kb) - median(ub))
}
await app.services.auth.idle()
const f = (x: number) => Number(x.toFixed(3))
console.log(JSON.stringify({
  database: db.kind,
  pairs: blocks,
  blockSize: size,
  non202,
  emailsReceived: smtp.received(),
  medianMs: { known: f(median(all.known)), unknown: f(median(all.unknown)) },
  medianOfBlockDifferencesMs: f(median(diffs)),
  blockDifferencesMs: { min: f(Math.min(...diffs)), max: f(Math.max(...diffs)) },
  node: process.version
}, null, 2))

await close()
process.exit(non202 === 0 ? 0 : 1)
