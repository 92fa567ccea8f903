import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { build } from '../helpers/build.js'
import { startSmtp } from '../helpers/smtp.js'
import { startFakeHttp, type FakeRequest } from '../helpers/fake-http.js'
import { invite } from '../helpers/invite.js'
import { workosInvitationFor } from '../helpers/workos.js'
import { insertWorkspace } from '../../src/db/workspaces.js'
import { startTracing } from '../../src/tracing.js'

// Traces, as an operator's collector receives them: the real OTLP/HTTP exporter (JSON) sends to a
// loopback receiver. One invite is one trace: the request span (continuing the caller's
// traceparent), its SQL statements and its SMTP send; on the identity-provider path the WorkOS
// call is a span of the same trace and carries traceparent to the provider.

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes: Array<{ key: string, value: { stringValue?: string, intValue?: number | string } }>
}

/** A collector on loopback: what the exporter POSTs to /v1/traces, parsed. */
async function startCollector (t: { teardown(fn: () => unknown): void }) {
  const spans: OtlpSpan[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      if (req.url === '/v1/traces' && req.headers['content-type'] === 'application/json') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>
        }
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans)
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', resolve) })
  t.teardown(async () => { await new Promise(resolve => server.close(resolve)) })
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans }
}

const attr = (s: OtlpSpan | undefined, key: string) => s?.attributes.find(a => a.key === key)?.value.stringValue
const SERVER = 2
const CLIENT = 3
const ORG = 'org_01TRACEDORGANIZATION'

t.test('one invite is one trace: request, SQL and SMTP spans; traceparent continued and propagated', async t => {
  const collector = await startCollector(t)
  const tracing = startTracing({ endpoint: collector.url + '/', serviceName: 'workspace-test', version: '0.0.0' })
  t.teardown(async () => { await tracing.shutdown() })
  const smtp = await startSmtp(t)
  const workos = await startFakeHttp(t)
  workos.on('POST /user_management/invitations', (req: FakeRequest) => ({
    status: 201, json: workosInvitationFor(req, 'invitation_traced', ORG)
  }))
  const h = await build(t, {
    tracer: tracing.tracer,
    env: {
      SMTP_URL: smtp.url,
      WORKOS_API_KEY: 'sk_test_fake',
      WORKOS_CLIENT_ID: 'client_fake',
      WORKOS_API_HOSTNAME: workos.hostname,
      WORKOS_API_PORT: String(workos.port),
      WORKOS_API_HTTPS: 'false'
    }
  })
  // The fallback path (no organization): an e-mail through the loopback SMTP server.
  const admin = await h.signIn()
  const callerTrace = '0af7651916cd43dd8448eb211c80319c'
  const callerSpan = 'b7ad6b7169203331'
  const res = await invite(h, admin.cookie, { email: 'traced@example.com' }, { traceparent: `00-${callerTrace}-${callerSpan}-01` })
  t.equal(res.statusCode, 200)
  t.equal(smtp.messages.length, 1)

  // The identity-provider path: the WorkOS SDK's fetch.
  const ws = await insertWorkspace(h.db, { name: 'Org', workosOrganizationId: ORG, now: h.clock.now() })
  const orgAdmin = await h.signIn({ workspaceId: ws.id })
  t.equal((await invite(h, orgAdmin.cookie, { email: 'idp@example.com' })).statusCode, 200)

  await tracing.flush()
  const spans = collector.spans
  const inTrace = (traceId: string) => spans.filter(s => s.traceId === traceId)

  const request = spans.find(s => s.name === 'POST /api/users/invite' && s.traceId === callerTrace)
  t.ok(request, 'the request span, named by the contract path, in the caller\'s trace')
  t.equal(request?.kind, SERVER)
  t.equal(request?.parentSpanId, callerSpan, 'a child of the caller\'s span (traceparent continued)')
  t.equal(attr(request, 'http.route'), '/api/users/invite')

  const trace = inTrace(callerTrace)
  const sql = trace.filter(s => attr(s, 'db.system') !== undefined && s.name !== 'transaction')
  t.ok(sql.length >= 3, `${sql.length} SQL statement spans in the trace`)
  t.ok(sql.some(s => s.name === 'INSERT' && /INSERT INTO invitations/i.test(attr(s, 'db.query.text') ?? '')),
    'the invitation\'s INSERT is one of them')
  t.ok(sql.some(s => /FROM sessions/.test(attr(s, 'db.query.text') ?? '')),
    'the session lookup (a preHandler hook, after the body was read) is in the trace too')
  t.ok(sql.every(s => s.kind === CLIENT && attr(s, 'db.system') === (h.db.kind === 'pglite' ? 'pglite' : 'postgresql')))
  t.notOk(sql.some(s => (attr(s, 'db.query.text') ?? '').includes('traced@example.com')), 'statements carry no values')
  const smtpSpan = trace.find(s => s.name === 'smtp send')
  t.ok(smtpSpan, 'the SMTP send is a span of the same trace')
  t.equal(attr(smtpSpan, 'mail.transport'), 'smtp')

  // Every span of the trace hangs under the request span.
  const byId = new Map(trace.map(s => [s.spanId, s]))
  const rootOf = (s: OtlpSpan): OtlpSpan => {
    const parent = s.parentSpanId !== undefined ? byId.get(s.parentSpanId) : undefined
    return parent === undefined ? s : rootOf(parent)
  }
  t.ok([...sql, smtpSpan].every(s => s !== undefined && rootOf(s) === request), 'SQL and SMTP spans descend from the request')

  // The WorkOS call: a CLIENT span of the invite's trace, and traceparent sent to the provider.
  const idpRequest = spans.find(s => s.name === 'POST /api/users/invite' && s.traceId !== callerTrace)
  const workosCall = spans.find(s => s.kind === CLIENT && (attr(s, 'url.full') ?? '').includes('/user_management/invitations'))
  t.ok(workosCall, 'the WorkOS call is a span')
  t.equal(workosCall?.traceId, idpRequest?.traceId, 'in the invite\'s trace')
  const sent = workos.requests.find(r => r.path === '/user_management/invitations')
  t.match(sent?.headers.traceparent, new RegExp(`^00-${idpRequest?.traceId ?? '?'}-${workosCall?.spanId ?? '?'}-01$`),
    'traceparent on the outgoing request names that span')
})

t.test('without OTEL_EXPORTER_OTLP_ENDPOINT, OpenTelemetry is never loaded', async t => {
  // Only src/tracing.ts imports it, and only server.ts imports that, lazily, when configured.
  const { readdirSync, readFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const root = join(import.meta.dirname, '..', '..')
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter(f => f.endsWith('.ts'))
  const importers = files.filter(f => /from '(@opentelemetry\/|@fastify\/otel)/.test(readFileSync(join(root, 'src', f), 'utf8')))
  t.same(importers, ['tracing.ts'])
  const loaders = files.filter(f => /tracing\.js'/.test(readFileSync(join(root, 'src', f), 'utf8')))
  t.same(loaders, ['server.ts'])
  t.match(readFileSync(join(root, 'src/server.ts'), 'utf8'), /config\.tracing\.endpoint !== null\s*\?\s*\(await import\('\.\/tracing\.js'\)\)/)
  const h = await build(t)
  t.equal(h.app.db, h.db, 'statements are not wrapped')
})
