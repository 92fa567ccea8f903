import t from 'tap'
import type { LightMyRequestResponse } from 'fastify'
import { build, type SignedIn, type TestApp } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { ALL_SCOPES, createApiKey } from '../helpers/mcp.js'
import { buildStaging } from '../helpers/staging.js'
import { startSmtp } from '../helpers/smtp.js'
import { until } from '../helpers/service-process.js'
import { reencryptStored } from '../../src/housekeeping/reencrypt.js'
import { recordActions, recordIdsAfter, startOf, startReceiver } from './streams-peers.js'

// /api/audit-streams (issue 55, item 2): each operation and status against the contract, the
// scopes of API keys, the webhooks' address policy, tokens sealed at rest and never shown, the
// test record, pause and resume from where it stopped, and the pause after a day of failures
// with the admins' e-mail.

t.setTimeout(300_000)

const FAST = {
  JOBS_POLL_MS: '500',
  JOBS_MAINTENANCE_SECONDS: '1',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_DELAYS_MS: '100,200'
}

type Who = SignedIn | { key: string }

async function call (
  h: TestApp, who: Who, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown
): Promise<LightMyRequestResponse> {
  const auth = 'key' in who ? { authorization: `Bearer ${who.key}` } : { cookie: who.cookie }
  const res = await h.inject({
    method,
    url,
    headers: { ...auth, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {})
  })
  assertContract(t, method, url.split('?')[0] as string, res)
  return res
}

t.test('each operation and status, per the contract', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin' })
  const member = await h.signIn({ role: 'member', workspaceId: admin.workspaceId })
  const splunk = await startReceiver(t, 'splunk', 'hec-token-1')
  const https = await startReceiver(t, 'https', '')

  const noToken = await call(h, admin, 'POST', '/api/audit-streams', { kind: 'splunk', name: 'S', url: splunk.url })
  t.equal(noToken.statusCode, 400)
  t.match(noToken.json(), { code: 'VALIDATION_FAILED', details: { errors: [{ in: 'body', field: 'token' }] } }, 'Splunk needs a token')
  const httpsToken = await call(h, admin, 'POST', '/api/audit-streams', { kind: 'https', name: 'H', url: https.url, token: 'x' })
  t.equal(httpsToken.statusCode, 400, 'an https stream takes no token: its secret is made by the service')
  t.equal((await call(h, admin, 'POST', '/api/audit-streams', { kind: 'kafka', name: 'K', url: https.url })).statusCode, 400)
  t.equal((await call(h, member, 'GET', '/api/audit-streams')).statusCode, 403, 'admins only')

  const made = await call(h, admin, 'POST', '/api/audit-streams', { kind: 'splunk', name: 'Splunk', url: splunk.url, token: 'hec-token-1' })
  t.equal(made.statusCode, 201)
  t.match(made.json(), { kind: 'splunk', status: 'active', pausedReason: null, lag: 1, secret: null }, 'its own audit_stream.created waits')
  t.equal(made.headers['cache-control'], 'no-store')
  const id = made.json().id as string
  const signed = await call(h, admin, 'POST', '/api/audit-streams', { kind: 'https', name: 'Lake', url: https.url })
  t.equal(signed.statusCode, 201)
  t.match(signed.json().secret, /^whsec_/, 'an https stream: its signing secret, shown once')

  const listed = await call(h, admin, 'GET', '/api/audit-streams')
  t.equal(listed.statusCode, 200)
  t.equal(listed.json().items.length, 2)
  t.notOk(listed.body.includes('hec-token-1') || listed.body.includes(signed.json().secret), 'no token, no secret listed')
  t.equal((await call(h, admin, 'GET', `/api/audit-streams/${id}`)).statusCode, 200)
  t.equal((await call(h, admin, 'GET', '/api/audit-streams/not-a-uuid')).statusCode, 400)
  const unknown = '00000000-0000-4000-8000-000000000000'
  for (const [method, path] of [['GET', ''], ['PATCH', ''], ['DELETE', ''], ['POST', '/test'], ['POST', '/pause'], ['POST', '/resume']] as const) {
    const res = await call(h, admin, method, `/api/audit-streams/${unknown}${path}`, method === 'PATCH' ? { name: 'x' } : undefined)
    t.equal(res.statusCode, 404, `${method} ${path || '/'} of an unknown stream: 404`)
  }

  // Sealed at rest: neither the token nor the secret is in the table in clear.
  const stored = await h.db.query<{ row: string }>('SELECT row_to_json(s)::text AS row FROM audit_streams s')
  t.notOk(stored.rows.some(r => r.row.includes('hec-token-1') || r.row.includes(signed.json().secret.slice(6))), 'sealed at rest')

  // The test record: what the receiver said, with the stream's credential and format.
  const tested = await call(h, admin, 'POST', `/api/audit-streams/${id}/test`)
  t.equal(tested.statusCode, 200)
  t.same(tested.json(), { delivered: true, statusCode: 200, error: null })
  const testReq = splunk.requests.find(r => r.events.some(e => e.type === 'com.workspace-service.audit.test'))
  t.equal(testReq?.headers.authorization, 'Splunk hec-token-1', 'sent with the HEC token')
  const refusedToken = await call(h, admin, 'PATCH', `/api/audit-streams/${id}`, { token: 'wrong' })
  t.equal(refusedToken.statusCode, 200)
  t.same((await call(h, admin, 'POST', `/api/audit-streams/${id}/test`)).json(), { delivered: false, statusCode: 401, error: null },
    'a wrong token: the receiver\'s 401, said')
  await call(h, admin, 'PATCH', `/api/audit-streams/${id}`, { token: 'hec-token-1', name: 'Splunk EU' })
  t.equal((await call(h, admin, 'PATCH', `/api/audit-streams/${id}`, {})).statusCode, 400, 'nothing to change')
  await splunk.down()
  const down = (await call(h, admin, 'POST', `/api/audit-streams/${id}/test`)).json()
  t.match(down, { delivered: false, statusCode: null, error: /ECONNREFUSED|connect/ }, 'no answer: why')
  await splunk.up()

  // Pause, records meanwhile, resume: delivered from where it stopped, in order.
  const paused = await call(h, admin, 'POST', `/api/audit-streams/${id}/pause`)
  t.match(paused.json(), { status: 'paused', pausedReason: 'admin' })
  t.equal((await call(h, admin, 'POST', `/api/audit-streams/${id}/pause`)).statusCode, 200, 'pausing a paused stream: 200')
  const before = splunk.accepted().length
  await recordActions(h, admin.workspaceId, 5)
  t.equal((await call(h, admin, 'GET', `/api/audit-streams/${id}`)).json().lag >= 5, true, 'the lag grows while paused')
  const resumed = await call(h, admin, 'POST', `/api/audit-streams/${id}/resume`)
  t.match(resumed.json(), { status: 'active', pausedReason: null })
  const expected = await recordIdsAfter(h, admin.workspaceId, await startOf(h, id))
  await until('the records recorded while paused', () => {
    const ids = splunk.accepted().map(e => e.id)
    return expected.every(x => ids.includes(x)) || undefined
  }, 60_000)
  t.ok(splunk.accepted().length > before)
  const firsts = [...new Set(splunk.accepted().filter(e => !e.type.endsWith('.test')).map(e => e.id))]
  t.same(firsts, expected, 'every record of the workspace since the stream began, in order')
  const actions = (await h.db.query<{ action: string }>(
    "SELECT action FROM audit_events WHERE action LIKE 'audit_stream.%' ORDER BY chain_seq")).rows.map(r => r.action)
  t.same([...new Set(actions)].sort(), ['audit_stream.created', 'audit_stream.paused', 'audit_stream.resumed', 'audit_stream.tested', 'audit_stream.updated'])

  const gone = await call(h, admin, 'DELETE', `/api/audit-streams/${id}`)
  t.equal(gone.statusCode, 204)
  t.equal((await call(h, admin, 'GET', `/api/audit-streams/${id}`)).statusCode, 404)

  // npm run secrets:reencrypt reseals the streams' credentials too.
  const counts = await reencryptStored({ db: h.db, config: h.config })
  t.match(counts.find(c => c.store === 'audit stream credentials'), { current: 1, unreadable: 0 })
})

t.test('API keys: audit-streams:read reads, audit-streams:write changes', async t => {
  const h = await build(t, { env: FAST })
  const admin = await h.signIn()
  const https = await startReceiver(t, 'https', '')
  const reader = { key: (await createApiKey(h, admin, 'reader', ['audit-streams:read'])).secret }
  const writer = { key: (await createApiKey(h, admin, 'writer', ['audit-streams:write'])).secret }
  const others = { key: (await createApiKey(h, admin, 'others', ALL_SCOPES.filter(s => !s.startsWith('audit-streams:')))).secret }
  const made = await call(h, writer, 'POST', '/api/audit-streams', { kind: 'https', name: 'Lake', url: https.url })
  t.equal(made.statusCode, 201)
  t.equal((await call(h, reader, 'GET', '/api/audit-streams')).json().items.length, 1)
  const refused = await call(h, reader, 'POST', `/api/audit-streams/${made.json().id as string}/pause`)
  t.match(refused.json(), { code: 'INSUFFICIENT_SCOPE', details: { missingScopes: ['audit-streams:write'] } })
  t.match((await call(h, others, 'GET', '/api/audit-streams')).json(), { code: 'INSUFFICIENT_SCOPE' })
})

t.test('the webhooks\' address policy: a private address refused outside local', async t => {
  const h = await buildStaging(t, new Map([['siem.internal.test', '10.1.2.3']]))
  const admin = await h.signIn()
  for (const url of ['https://10.0.0.1/services/collector/event', 'https://siem.internal.test/x', 'http://splunk.example.com/x']) {
    const res = await call(h, admin, 'POST', '/api/audit-streams', { kind: 'splunk', name: 'S', url, token: 't' })
    t.equal(res.statusCode, 400, url)
    t.equal(res.json().code, 'WEBHOOK_URL_NOT_ALLOWED', url)
  }
})

t.test('a day of failures pauses the stream and tells the admins; resumed, nothing is lost', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, { env: { ...FAST, SMTP_URL: smtp.url } })
  const admin = await h.signIn({ role: 'admin', email: 'boss@example.com' })
  const datadog = await startReceiver(t, 'datadog', 'dd-key')
  datadog.mode = 'fail'
  const id = (await call(h, admin, 'POST', '/api/audit-streams', { kind: 'datadog', name: 'Datadog <EU>', url: datadog.url, token: 'dd-key' })).json().id as string
  await recordActions(h, admin.workspaceId, 3)
  await until('a failed attempt', async () => (await call(h, admin, 'GET', `/api/audit-streams/${id}`)).json().failingSince ?? undefined, 60_000)
  h.clock.advance(86_400_000 + 1000)
  const paused = await until('paused after a day', async () => {
    const s = (await call(h, admin, 'GET', `/api/audit-streams/${id}`)).json()
    return s.status === 'paused' ? s : undefined
  }, 60_000)
  t.match(paused, { pausedReason: 'failing', lastStatusCode: 503 })
  const mail = await smtp.nextMessage(0, 60_000)
  t.same(mail.to, ['boss@example.com'])
  t.match(mail.subject, /audit stream Datadog <EU> was paused/)
  t.match(mail.text, /HTTP 503/)
  t.notOk(mail.html.includes('<EU>'), 'the name escaped in HTML')
  const event = await h.db.query<{ actor_type: string, payload: { reason: string } }>(
    "SELECT actor_type, payload FROM audit_events WHERE action = 'audit_stream.paused'")
  t.match(event.rows, [{ actor_type: 'system', payload: { reason: 'failing' } }], 'recorded, by the service')

  datadog.mode = 'ok'
  await recordActions(h, admin.workspaceId, 2, 3)
  t.match((await call(h, admin, 'POST', `/api/audit-streams/${id}/resume`)).json(), { status: 'active', failingSince: null })
  const expected = await recordIdsAfter(h, admin.workspaceId, await startOf(h, id))
  await until('everything since the stream began', () => {
    const ids = new Set(datadog.accepted().map(e => e.id))
    return expected.every(x => ids.has(x)) || undefined
  }, 60_000)
  t.same([...new Set(datadog.accepted().map(e => e.id))], expected, 'in order, from where it stopped')
})
