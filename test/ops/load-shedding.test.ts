import t from 'tap'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { withRole } from '../helpers/invite.js'
import { until } from '../helpers/service-process.js'

// Load shedding: the event loop is blocked on purpose, in this process, by a busy loop; while
// its delay is past LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS every operation answers 503
// SERVICE_UNAVAILABLE with Retry-After (a contract ErrorResponse, before any work is done),
// /api/health says why, and once the loop is free again everything answers as before.

/** Occupies the event loop for `ms` (what a CPU-bound request or a runaway loop does). */
function busy (ms: number): void {
  const end = performance.now() + ms
  while (performance.now() < end) { /* spin */ }
}

/** Waits for `ok` (the shared until, polled every 10 ms: under-pressure's interval is 100 ms here). */
const when = async (what: string, ok: () => boolean): Promise<void> => {
  await until(what, () => ok() || undefined, 10_000, 10)
}

t.test('an overloaded event loop is shed with 503 + Retry-After, health reports it, then recovery', async t => {
  const h = await build(t, { env: { LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '100', LOAD_SHED_SAMPLE_INTERVAL_MS: '100' } })
  const admin = await h.signIn()
  const invite = async (email: string, cookie = admin.cookie) => await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie, 'content-type': 'application/json' },
    payload: JSON.stringify(withRole({ email }))
  })
  const overloaded = () => h.app.loadStatus()?.overloaded === true

  await when('a calm event loop', () => h.app.loadStatus()?.overloaded === false)
  const calm = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(calm.statusCode, 200)
  t.equal(calm.json().checks.eventLoop.status, 'ok', 'health reports the event loop')
  assertContract(t, 'GET', '/api/health', calm)

  // Blocks of 250 ms with a turn of the loop between them: every 100 ms sample sees a long delay,
  // and the requests below still get their turns.
  const blocking = { on: true }
  const blocker = (async () => {
    while (blocking.on) {
      busy(250)
      await new Promise(resolve => setImmediate(resolve))
    }
  })()
  try {
    await when('the overload to be noticed', overloaded)
    const shed = await invite('shed@example.com')
    t.equal(shed.statusCode, 503)
    t.same(shed.json(), {
      message: 'The service is unavailable: the service is overloaded; retry shortly',
      code: 'SERVICE_UNAVAILABLE'
    })
    t.equal(shed.headers['retry-after'], '1', 'Retry-After: two sample intervals, at least 1 s')
    assertContract(t, 'POST', '/api/users/invite', shed)

    const anonymous = await invite('anon@example.com', '')
    t.equal(anonymous.statusCode, 503, 'shed before authentication: no work, not even the 401')
    const page = await h.inject({ method: 'GET', url: '/login' })
    t.equal(page.statusCode, 503, 'pages are shed too')
    assertContract(t, 'GET', '/login', page)

    const health = await h.inject({ method: 'GET', url: '/api/health' })
    t.equal(health.statusCode, 503, 'health answers 503 itself, with the reason')
    t.equal(health.json().status, 'unavailable')
    t.equal(health.json().checks.eventLoop.status, 'overloaded')
    t.ok(health.json().checks.eventLoop.delayMs >= 100, `delay ${String(health.json().checks.eventLoop.delayMs)} ms`)
    t.equal(health.json().checks.database.status, 'ok', 'the database is fine')
    t.equal(health.headers['retry-after'], '1')
    assertContract(t, 'GET', '/api/health', health)
  } finally {
    blocking.on = false
    await blocker
  }
  const { rows } = await h.db.query('SELECT 1 FROM invitations WHERE email = $1', ['shed@example.com'])
  t.equal(rows.length, 0, 'the shed invite did nothing')

  const calmAgain = async () => { await when('recovery', () => h.app.loadStatus()?.overloaded === false) }
  await calmAgain()
  const again = await invite('after@example.com')
  t.equal(again.statusCode, 200, 'answered again once the loop is free')
  await calmAgain()
  t.equal((await h.inject({ method: 'GET', url: '/api/health' })).statusCode, 200)
})

t.test('off by default: nothing measured, health without an eventLoop check', async t => {
  const h = await build(t)
  t.equal(h.app.loadStatus(), null)
  busy(300)
  const health = await h.inject({ method: 'GET', url: '/api/health' })
  t.equal(health.statusCode, 200, 'a blocked loop is not shed')
  t.notOk('eventLoop' in health.json().checks)
})

// /api/health keeps its usual answer while the sample stays the same object (handlers/health.ts).
t.test('between two samples the status is one object; a sample with a new delay is a new one', async t => {
  const h = await build(t, { env: { LOAD_SHED_MAX_EVENT_LOOP_DELAY_MS: '100', LOAD_SHED_SAMPLE_INTERVAL_MS: '100' } })
  await when('a calm event loop', () => h.app.loadStatus()?.overloaded === false)
  // No timer runs between two synchronous calls: the same sample.
  const status = h.app.loadStatus()
  t.equal(h.app.loadStatus(), status, 'the same status object between samples')
  for (let i = 0; i < 3; i++) t.equal((await h.inject({ method: 'GET', url: '/api/health' })).statusCode, 200)
  busy(150)
  await when('a sample of the blocked loop', () => h.app.loadStatus() !== status)
  t.not(h.app.loadStatus(), status, 'a new object once the delay changed')
})
