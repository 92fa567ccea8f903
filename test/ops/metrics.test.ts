import t from 'tap'
import { build, testConfig, type TestApp } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { withRole } from '../helpers/invite.js'

// Prometheus metrics on their own listener (METRICS_PORT): a scrape before and after the
// operations shows the counters and the request histogram moving, labelled by the contract's
// path templates (never a raw URL), and the API's own port has no /metrics.

interface Sample { name: string, labels: Record<string, string>, value: number }

/** The samples of Prometheus text (label values may hold braces: a path template does). */
function samples (text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (m === null) continue
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map(l => [l[1], l[2]]))
    out.push({ name: m[1] ?? '', labels, value: Number(m[3]) })
  }
  return out
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there is none). */
function sample (text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0)
}

/** The values one label takes across the samples of `name`. */
function labelValues (text: string, name: string, label: string): Set<string> {
  return new Set(samples(text).filter(s => s.name === name).map(s => s.labels[label] ?? ''))
}

async function scrape (url: string): Promise<string> {
  const res = await fetch(url)
  const type = res.headers.get('content-type') ?? ''
  if (res.status !== 200 || !type.startsWith('text/plain; version=0.0.4')) throw new Error(`scrape: ${res.status} ${type}`)
  return await res.text()
}

async function invite (h: TestApp, cookie: string, email: string) {
  return await h.inject({
    method: 'POST',
    url: '/api/users/invite',
    headers: { cookie, 'content-type': 'application/json' },
    payload: JSON.stringify(withRole({ email }))
  })
}

t.test('a scrape before and after an invite shows the metrics moving', async t => {
  const smtp = await startSmtp(t)
  const h = await build(t, {
    env: { METRICS_PORT: '0', SMTP_URL: smtp.url, INVITE_EMAILS_PER_HOUR: '2', AUTH_RATE_LIMIT_PER_MINUTE: '1' }
  })
  const url = await h.app.listenMetrics()
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'on METRICS_HOST (default loopback), a port of its own')
  const admin = await h.signIn()
  const before = await scrape(url ?? '')
  const invites = { name: 'workspace_invitations_total', labels: { path: 'email', outcome: 'sent' } }
  const inviteRequests = { method: 'POST', route: '/api/users/invite', status_code: '200' }

  const first = await invite(h, admin.cookie, 'ada@example.com')
  t.equal(first.statusCode, 200)
  const after = await scrape(url ?? '')
  t.equal(sample(after, invites.name, invites.labels) - sample(before, invites.name, invites.labels), 1,
    'workspace_invitations_total{path="email",outcome="sent"} +1')
  t.equal(
    sample(after, 'http_request_duration_seconds_count', inviteRequests) -
      sample(before, 'http_request_duration_seconds_count', inviteRequests),
    1, 'one request observed, labelled with the contract path and status'
  )
  t.ok(sample(after, 'http_request_duration_seconds_sum', inviteRequests) > 0, 'with its duration')
  t.ok(sample(after, 'http_request_duration_seconds_bucket', { ...inviteRequests, le: '+Inf' }) >= 1, 'as a histogram')

  // A failed send, a re-send (path with an id), a refused draw, a refused public request, an
  // unknown URL and a failed statement.
  smtp.mode = 'reject-rcpt'
  t.equal((await invite(h, admin.cookie, 'bob@example.com')).statusCode, 500)
  smtp.mode = 'accept'
  const { rows: [inv] } = await h.db.query<{ id: string }>('SELECT id FROM invitations WHERE email = $1', ['ada@example.com'])
  const resend = await h.inject({
    method: 'POST', url: `/api/invitations/${inv?.id ?? ''}/resend`, headers: { cookie: admin.cookie }
  })
  t.equal(resend.statusCode, 200)
  t.equal((await invite(h, admin.cookie, 'cyd@example.com')).statusCode, 429, 'the hourly e-mail budget (2) is spent')
  for (const expected of [202, 429]) {
    const res = await h.inject({ method: 'POST', url: '/api/auth/login-link', payload: { email: 'x@example.com' } })
    t.equal(res.statusCode, expected)
  }
  t.equal((await h.inject({ method: 'GET', url: `/api/nothing/${inv?.id ?? ''}` })).statusCode, 404)
  // A route matched with an empty parameter is answered by the not-found handler: unmatched too.
  t.equal((await h.inject({ method: 'POST', url: '/api/invitations//resend', headers: { cookie: admin.cookie } })).statusCode, 404)
  await t.rejects(h.app.db.query('SELECT * FROM no_such_table'))

  const later = await scrape(url ?? '')
  t.equal(sample(later, invites.name, { path: 'email', outcome: 'failed' }), 1, 'the failed send counted as failed')
  t.equal(sample(later, invites.name, invites.labels), 2, 'the re-send counted as sent')
  t.equal(sample(later, 'rate_limit_refusals_total', { scope: 'invitation-emails' }), 1, 'budget refusal by scope')
  t.equal(sample(later, 'rate_limit_refusals_total', { scope: 'client-ip' }), 1, 'per-address refusal by scope')
  t.equal(sample(later, 'database_query_errors_total'), 1, 'the failed statement counted')
  const routes = labelValues(later, 'http_request_duration_seconds_count', 'route')
  t.ok(routes.has('/api/invitations/{invitationId}/resend'), 'the re-send labelled by its path template')
  t.ok(routes.has('unmatched'), 'an unknown URL under one label')
  t.equal(sample(later, 'http_request_duration_seconds_count', { route: 'unmatched', status_code: '404' }), 2,
    'each answer of the not-found handler observed once (the route\'s own hook does not count it again)')
  t.notOk([...routes].some(r => r.includes(inv?.id ?? '?')), 'no raw URL (no id) in any label')
  t.equal(sample(later, 'http_request_duration_seconds_count', { route: '/api/users/invite', status_code: '429' }), 1)

  // The database pool (PGlite: its one connection), event-loop delay and process metrics.
  if (h.db.kind === 'pglite') {
    t.equal(sample(later, 'database_pool_connections'), 1)
    t.equal(sample(later, 'database_pool_idle_connections'), 1)
  } else {
    t.ok(sample(later, 'database_pool_connections') >= 1)
  }
  t.equal(sample(later, 'database_pool_waiting_clients'), 0)
  for (const name of ['nodejs_eventloop_lag_p99_seconds', 'process_resident_memory_bytes', 'process_cpu_seconds_total']) {
    t.match(later, new RegExp(`^${name} `, 'm'), `${name} is reported`)
  }
})

t.test('the API port has no /metrics; the metrics listener serves nothing else', async t => {
  const h = await build(t, { env: { METRICS_PORT: '0' } })
  const api = await h.inject({ method: 'GET', url: '/metrics' })
  t.equal(api.statusCode, 404)
  t.equal(api.json().code, 'NOT_FOUND')
  const url = await h.app.listenMetrics() ?? ''
  t.equal((await fetch(url.replace('/metrics', '/api/health'))).status, 404)
  t.equal((await fetch(url, { method: 'POST' })).status, 404)
})

t.test('two apps in one process keep their own registries', async t => {
  const a = await build(t, { env: { METRICS_PORT: '0' } })
  const b = await build(t, { env: { METRICS_PORT: '0' } })
  await a.inject({ method: 'GET', url: '/api/health' })
  const [ta, tb] = [await scrape(await a.app.listenMetrics() ?? ''), await scrape(await b.app.listenMetrics() ?? '')]
  const health = { route: '/api/health', status_code: '200' }
  t.equal(sample(ta, 'http_request_duration_seconds_count', health), 1)
  t.equal(sample(tb, 'http_request_duration_seconds_count', health), 0)
})

t.test('METRICS_PORT is validated: a port, and not the API\'s', async t => {
  t.throws(() => testConfig({ PORT: '3000', METRICS_PORT: '3000' }), /METRICS_PORT must differ from PORT/)
  t.throws(() => testConfig({ METRICS_PORT: 'x' }), /METRICS_PORT/)
  t.same(testConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0' }).metrics, { port: 9464, host: '0.0.0.0' })
})

t.test('without METRICS_PORT nothing is collected or listened on', async t => {
  const h = await build(t)
  t.equal(await h.app.listenMetrics(), null)
  t.equal(h.app.db, h.db, 'statements are not wrapped')
  t.equal((await h.inject({ method: 'GET', url: '/metrics' })).statusCode, 404)
})

t.test('request durations: one histogram, its buckets and labels as before', async t => {
  const h = await build(t, { env: { METRICS_PORT: '0' } })
  t.equal((await h.inject({ method: 'GET', url: '/api/health' })).statusCode, 200)
  const text = await scrape(await h.app.listenMetrics() ?? '')
  t.match(text, /^# HELP http_request_duration_seconds API requests by method, contract path template and status code\.$/m)
  t.match(text, /^# TYPE http_request_duration_seconds histogram$/m)
  const health = { method: 'GET', route: '/api/health', status_code: '200' }
  const bounds = samples(text)
    .filter(s => s.name === 'http_request_duration_seconds_bucket' && s.labels.route === health.route)
    .map(s => s.labels.le)
  t.same(bounds, ['0.005', '0.01', '0.025', '0.05', '0.1', '0.25', '0.5', '1', '2.5', '5', '10', '+Inf'], 'the same buckets')
  t.equal(sample(text, 'http_request_duration_seconds_bucket', { ...health, le: '+Inf' }), 1)
  t.equal(sample(text, 'http_request_duration_seconds_count', health), 1)
  t.ok(sample(text, 'http_request_duration_seconds_sum', health) > 0, 'with its duration')
})
