import t, { type Test } from 'tap'
import { build, testDatabase, type SignedIn, type TestApp } from '../helpers/build.js'
import { until } from '../helpers/service-process.js'
import { recordActions, recordIdsAfter, startOf, startReceiver, type Receiver } from './streams-peers.js'

// The must-show of issue 55, item 2: an audit stream to a loopback Splunk HTTP Event Collector
// and one to a Datadog logs intake, through a receiver outage of a minute (Splunk's port closed:
// connections refused; Datadog answering 503) and a restart of the service mid-batch (the app
// closed while a batch is held unanswered, a new one built on the same database): every record
// delivered, in order, none lost; a record sent twice only as at-least-once allows, with the
// same id both times. The minute passes on the service's fake clock; the back-off is
// WEBHOOK_RETRY_DELAYS_MS, short here so that the test does not wait it out.

t.setTimeout(300_000)

const ENV = {
  // Both services open the tokens the first one sealed: the same secret.
  SESSION_SECRET: 'stream-restart-'.padEnd(40, 's'),
  JOBS_POLL_MS: '500',
  JOBS_MAINTENANCE_SECONDS: '1',
  WEBHOOK_TIMEOUT_MS: '2000',
  SMTP_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_DELAYS_MS: '200,400,800'
}
const TOKEN = { splunk: 'hec-5a1b2c3d-4e5f', datadog: 'dd-0f9e8d7c6b5a' } as const

async function stream (h: TestApp, admin: SignedIn, kind: 'splunk' | 'datadog', r: Receiver): Promise<string> {
  const res = await h.inject({
    method: 'POST',
    url: '/api/audit-streams',
    headers: { cookie: admin.cookie, 'content-type': 'application/json' },
    payload: { kind, name: kind, url: r.url, token: TOKEN[kind] }
  })
  if (res.statusCode !== 201) throw new Error(`POST /api/audit-streams: ${res.statusCode} ${res.body}`)
  return res.json().id
}

/**
 * Every expected id accepted; first acceptances in the chain's order; every copy received (the
 * batch whose answer was cut included) identical to the first, id and all.
 */
function checkDelivered (t: Test, name: string, r: Receiver, expected: string[]): void {
  const got = r.accepted()
  const first = new Map<string, string>()
  const order: string[] = []
  for (const e of got) {
    if (!first.has(e.id)) { first.set(e.id, JSON.stringify(e)); order.push(e.id) }
  }
  const received = r.requests.flatMap(q => q.events)
  let copies = 0
  const seen = new Set<string>()
  for (const e of received) {
    if (seen.has(e.id)) copies++
    seen.add(e.id)
    if (first.get(e.id) !== JSON.stringify(e)) t.fail(`${name}: ${e.id} came again with other content`)
  }
  t.same(order, expected, `${name}: all ${expected.length} records, each first delivered in the chain's order`)
  t.ok(got.every(e => e.specversion === '1.0' && e.data.id === e.id && e.type === `com.workspace-service.audit.${e.data.action}`),
    `${name}: CloudEvents 1.0 envelopes whose id is the record's`)
  t.ok(got.every(e => typeof e.ocsfclassuid === 'number' && typeof e.ocsfactivityid === 'number'),
    `${name}: each with its OCSF class and activity`)
  t.comment(`${name}: ${received.length} envelopes received for ${expected.length} records (${copies} copies, at least once)`)
}

t.test('Splunk HEC and Datadog through a minute of outage and a restart mid-batch: none lost, in order', async t => {
  const db = await testDatabase(t)
  const splunk = await startReceiver(t, 'splunk', TOKEN.splunk)
  const datadog = await startReceiver(t, 'datadog', TOKEN.datadog)
  const h1 = await build(t, { db, env: ENV })
  const admin = await h1.signIn({ role: 'admin' })
  const ws = admin.workspaceId
  const splunkId = await stream(h1, admin, 'splunk', splunk)
  const datadogId = await stream(h1, admin, 'datadog', datadog)

  await recordActions(h1, ws, 30)
  const all1 = await recordIdsAfter(h1, ws, await startOf(h1, datadogId))
  await until('the first records at both receivers', () =>
    (datadog.accepted().length >= all1.length && splunk.accepted().length > 0) || undefined, 60_000)

  // The outage: Splunk's port closed, Datadog answering 503, for a minute of the service's time.
  await splunk.down()
  datadog.mode = 'fail'
  await recordActions(h1, ws, 40, 30)
  // Refused at both as the service records it: a 503 the receiver sent is not yet the stream's
  // last answer until the delivery that got it has been written.
  await until('attempts refused at both', async () => {
    const read = async (id: string) =>
      (await h1.inject({ method: 'GET', url: `/api/audit-streams/${id}`, headers: { cookie: admin.cookie } })).json()
    const [s, d] = [await read(splunkId), await read(datadogId)]
    return (s.failingSince !== null && d.lastStatusCode === 503) || undefined
  }, 60_000)
  h1.clock.advance(60_000)
  const during = (await h1.inject({ method: 'GET', url: '/api/audit-streams', headers: { cookie: admin.cookie } })).json()
  for (const s of during.items) {
    t.equal(s.status, 'active', `${s.kind as string}: still active a minute into the outage`)
    t.ok(s.lag > 0, `${s.kind as string}: records waiting (lag ${s.lag as number})`)
  }
  t.match(during.items.find((s: { id: string }) => s.id === splunkId), { lastStatusCode: null, lastError: /ECONNREFUSED|connect/ })
  t.match(during.items.find((s: { id: string }) => s.id === datadogId), { lastStatusCode: 503 })

  // The receivers come back; Datadog holds the next batch unanswered: the service is closed with
  // that batch in flight, and a new one built on the same database.
  await splunk.up()
  datadog.mode = 'hold'
  const heldAt = datadog.requests.length
  await until('a Datadog batch in flight', () => datadog.requests.length > heldAt || undefined, 60_000)
  await h1.app.close()
  datadog.release(0) // the connection cut: no answer reaches the service that sent the batch
  const h2 = await build(t, { db, env: ENV })
  await recordActions(h2, ws, 30, 70)

  const expectedSplunk = await recordIdsAfter(h2, ws, await startOf(h2, splunkId))
  const expectedDatadog = await recordIdsAfter(h2, ws, await startOf(h2, datadogId))
  const delivered = (r: Receiver, expected: string[]) => (): true | undefined => {
    const ids = new Set(r.accepted().map(e => e.id))
    return expected.every(id => ids.has(id)) || undefined
  }
  await until('every record at Splunk', delivered(splunk, expectedSplunk), 120_000)
  await until('every record at Datadog', delivered(datadog, expectedDatadog), 120_000)
  checkDelivered(t, 'Splunk', splunk, expectedSplunk)
  checkDelivered(t, 'Datadog', datadog, expectedDatadog)
  const heldBatch = datadog.requests[heldAt]?.events.map(e => e.id) ?? []
  t.ok(heldBatch.length > 0 && heldBatch.every(id => datadog.accepted().some(e => e.id === id)),
    'the batch cut by the restart was delivered again after it, with the same ids')
  t.ok(splunk.requests.every(q => q.headers['content-type'] === 'application/json'), 'HEC: JSON')
  t.ok(datadog.requests.every(q => q.headers['dd-api-key'] === TOKEN.datadog), 'Datadog: DD-API-KEY on every request')
  const splunkLine = JSON.parse(splunk.requests.find(q => q.status === 200)?.body.split('\n')[0] ?? '{}')
  t.match(splunkLine, { time: Number, source: 'workspace-service', sourcetype: String, event: { specversion: '1.0' } },
    'HEC events: time, source, sourcetype and the envelope as the event')
  const ddLine = JSON.parse(datadog.requests.find(q => q.status === 202)?.body ?? '[]')[0]
  t.match(ddLine, { ddsource: 'workspace-service', service: 'workspace-service', ddtags: /ocsf_class_uid:\d+/, message: String },
    'Datadog logs: ddsource, service, tags and the envelope as the message')
  const after = (await h2.inject({ method: 'GET', url: '/api/audit-streams', headers: { cookie: admin.cookie } })).json()
  await until('both streams caught up', async () => {
    const now = (await h2.inject({ method: 'GET', url: '/api/audit-streams', headers: { cookie: admin.cookie } })).json()
    const caughtUp = (s: { lag: number, failingSince: string | null }): boolean =>
      s.lag === 0 && s.failingSince === null
    return now.items.every(caughtUp) || undefined
  }, 60_000)
  t.equal(after.items.length, 2)
})
