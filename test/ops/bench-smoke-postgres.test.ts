import t from 'tap'
import { spawnSync } from 'node:child_process'
import { TEST_DATABASE_URL } from '../helpers/build.js'
import { bench, TINY } from '../helpers/bench.js'
import { ensureBuilt } from '../helpers/built.js'

// The modes of `npm run bench` on PostgreSQL (TEST_DATABASE_URL), each at tiny sizes, as
// bench-smoke.test.ts runs the others: a smoke run, so none of them breaks unnoticed. The figures
// mean nothing and are not checked; what each step printed is.

t.setTimeout(600_000)
const skip = TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL is not set' : false

t.test('the build the modes run on (npm run build)', { skip }, async t => {
  const built = await ensureBuilt()
  t.equal(built.status, 0, `built ${built.output}`)
})

const pg = ['--pg-url', TEST_DATABASE_URL ?? '']

t.test('--jobs (PostgreSQL)', { skip }, async t => {
  const r = await bench([...pg, '--jobs', '--events', '5'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
})

t.test('--funnel (PostgreSQL)', { skip }, async t => {
  const r = await bench([...pg, '--funnel', '--invitations', '200', '--runs', '1'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
  t.match(r.out, /funnel over 200 invitations/)
})

t.test('--batch (PostgreSQL)', { skip }, async t => {
  const r = await bench([...TINY, ...pg, '--batch', '--batch-rows', '20', '--concurrent', '4'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
  t.match(r.out, /4 concurrent POST \/api\/users\/invite/)
})

t.test('--scim (PostgreSQL): four directory clients importing at once', { skip }, async t => {
  const r = await bench([...TINY, ...pg, '--scim', '--people', '8', '--clients', '4'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
  t.match(r.out, /4 directory clients at once/, 'four clients')
  t.match(r.out, /round 1: 8 people in [\d.]+ s: \d+ people\/s; service CPU [\d.]+ ms a person/, 'the round measured')
  t.match(r.out, /^(MET |MISS) +SCIM import, 4 clients at once \(PostgreSQL\) ≥ 400 people\/s: \d+/m, 'the target line')
})

// Under callgrind every instruction is simulated: starting node and the service there takes
// minutes, not seconds, so this smoke run is opt-in (BENCH_SMOKE_INSTRUCTIONS=1).
const valgrind = spawnSync('valgrind', ['--version']).status === 0
const instructions = process.env.BENCH_SMOKE_INSTRUCTIONS === '1'
  ? (valgrind ? skip : 'no valgrind')
  : 'minutes under valgrind: set BENCH_SMOKE_INSTRUCTIONS=1'
t.test('--instructions (PostgreSQL, valgrind)', { skip: instructions }, async t => {
  t.setTimeout(1_200_000)
  const r = await bench([...pg, '--instructions', '--rounds', '1', '--requests', '20', '--warmup-requests', '20'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
})
