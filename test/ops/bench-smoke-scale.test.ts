import t from 'tap'
import { TEST_DATABASE_URL } from '../helpers/build.js'
import { bench, TINY } from '../helpers/bench.js'
import { ensureBuilt } from '../helpers/built.js'

// `npm run bench -- --scale` at tiny sizes, as bench-smoke-postgres.test.ts runs the other modes
// on PostgreSQL (a file of its own: it starts two services and seeds 10k members and 1k
// workspaces, the longest of the smoke runs). The figures mean nothing and are not checked.

t.setTimeout(600_000)
const skip = TEST_DATABASE_URL === null ? 'TEST_DATABASE_URL is not set' : false
const pg = ['--pg-url', TEST_DATABASE_URL ?? '']

t.test('the build the modes run on (npm run build)', { skip }, async t => {
  const built = await ensureBuilt()
  t.equal(built.status, 0, `built ${built.output}`)
})

t.test('--scale (PostgreSQL): growth, concurrency and pool sizes', { skip }, async t => {
  // One size: the growth table has no second row to compare (nothing to judge at tiny sizes), and
  // every step runs — seeding, both list pages, concurrency on the largest, the pool sizes.
  const r = await bench([...TINY, ...pg, '--scale', '--sizes', '100', '--pools', '5', '--concurrent', '4'])
  t.equal(r.code, 0, r.code === 0 ? 'exit 0' : r.out)
  t.match(r.out, /list page 2/, 'the second list page was measured')
  t.match(r.out, /health × 20 conns/, 'the concurrency check ran')
  t.match(r.out, /pool: /, 'so did the pool sizes')
})
