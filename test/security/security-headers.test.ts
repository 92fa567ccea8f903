import t from 'tap'
import { connect } from 'node:net'
import { build } from '../helpers/build.js'
import { API_CSP, HSTS, answerKind } from '../../src/plugins/helmet.js'
import { closedPort } from '../helpers/smtp.js'

// Security headers by kind of answer (src/plugins/helmet.ts), chosen by the Content-Type of what
// leaves, whoever answered: a handler, security, validation, the not-found handler, the router,
// Node's HTTP parser. JSON (and every other non-document answer) carries OWASP's REST set and
// API-Version, and none of the headers meant for documents; HTML pages carry the document set,
// exactly one CSP (their own nonce policy) and no-store; assets carry nosniff and CORP. HSTS on
// every kind, only over https: PUBLIC_URL https, or X-Forwarded-Proto https from a trusted proxy.

const VERSION = /^\d+\.\d+\.\d+$/
const API = {
  'cache-control': 'no-store',
  'content-security-policy': API_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'cross-origin-resource-policy': 'same-origin',
  'api-version': VERSION
}
/** helmet's headers meant for documents: never on an API answer. */
const DOCUMENT_ONLY = [
  'cross-origin-opener-policy', 'origin-agent-cluster', 'referrer-policy', 'x-dns-prefetch-control',
  'x-download-options', 'x-permitted-cross-domain-policies', 'x-xss-protection'
]
const DOCUMENT = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'origin-agent-cluster': '?1',
  'x-dns-prefetch-control': 'off',
  'x-permitted-cross-domain-policies': 'none',
  'cache-control': 'no-store'
}

// SCIM (application/scim+json) and event streams (text/event-stream) are API answers by their
// type; no operation of this contract answers either yet (MCP answers JSON), so the rule is checked here.
t.test('the kind of an answer is read from its Content-Type', async t => {
  const cases: Array<[string | undefined, string]> = [
    ['application/json; charset=utf-8', 'api'],
    ['application/scim+json', 'api'],
    ['text/event-stream', 'api'],
    ['text/plain; charset=utf-8', 'api'],
    [undefined, 'api'],
    ['text/html; charset=utf-8', 'document'],
    ['TEXT/HTML', 'document'],
    ['application/javascript; charset=utf-8', 'asset'],
    ['text/css; charset=utf-8', 'asset'],
    ['image/svg+xml', 'asset']
  ]
  for (const [type, kind] of cases) t.equal(answerKind(type), kind, `${type ?? 'none'}: ${kind}`)
})

t.test('every JSON answer carries the API set and nothing meant for documents', async t => {
  const h = await build(t)
  const cases: Array<[string, string, number, string, Record<string, string>?]> = [
    ['GET', '/api/health', 200, 'a JSON answer'],
    ['GET', '/api/users/me', 401, 'a security refusal'],
    ['GET', '/api/nothing-here', 404, 'the not-found handler'],
    ['GET', '/nothing-here', 404, 'the not-found handler outside /api'],
    ['POST', '/api/auth/login-link', 400, 'a validation error'],
    ['POST', `/api/invitations/${'a'.repeat(300)}/resend`, 400, 'a router refusal (parameter too long)'],
    ['GET', '/join/nosuchcode0000000', 404, 'a JSON error from an HTML route', { accept: 'application/json' }]
  ]
  for (const [method, url, status, what, headers] of cases) {
    const res = await h.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: { cookie: 'service_session=x', 'content-type': 'application/json', ...headers },
      ...(method === 'POST' ? { payload: '{"email":"not an address"}' } : {})
    })
    t.equal(res.statusCode, status, `${what}: ${status}`)
    t.match(res.headers['content-type'], /^application\/json/, `${what}: JSON`)
    t.match(res.headers, API, `${what}: the API set`)
    for (const name of DOCUMENT_ONLY) t.notOk(name in res.headers, `${what}: no ${name}`)
    t.notOk(res.headers['strict-transport-security'], `${what}: no HSTS over plain http`)
  }
})

// The sets go on through the reply's public API (src/plugins/helmet.ts), each name only where the
// answer has none yet: a header the handler set is the one sent, once.
t.test('a header the handler set wins over the set\'s, and is sent once', async t => {
  const h = await build(t)
  const res = await h.inject({ method: 'GET', url: '/api/openapi.json' })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['cache-control'], 'no-cache', 'a header the handler set wins over the set\'s no-store')
  t.match(res.headers, { ...API, 'cache-control': 'no-cache' }, 'and the rest of the API set is there')
  t.equal(Object.keys(res.headers).filter(n => n === 'cache-control').length, 1, 'one Cache-Control')
})

t.test('HTML pages carry the document set and their one nonce CSP; assets their own set', async t => {
  const h = await build(t)
  for (const url of ['/', '/login', '/signup', '/setup']) {
    const res = await h.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200)
    t.match(res.headers, DOCUMENT, `${url}: the document set, no-store`)
    t.notOk(res.headers['api-version'], `${url}: no API-Version`)
    // One header, one value: the page's policy replaced the default instead of being added to it.
    const csp = res.headers['content-security-policy']
    t.type(csp, 'string', `${url}: one CSP header`)
    const nonce = /script-src 'nonce-([^']+)'/.exec(String(csp))?.[1]
    t.ok(nonce, `${url}: the page's nonce policy`)
    // (The console's script is an ES module: its chunks are fetched under the same nonce.)
    t.ok(
      res.body.includes(`<script nonce="${nonce ?? '?'}" src="/`) || res.body.includes(`<script type="module" nonce="${nonce ?? '?'}" src="/`),
      `${url}: whose nonce the scripts carry`
    )
  }
  const docs = await h.inject({ method: 'GET', url: '/api/docs' })
  t.match(docs.headers['content-security-policy'], /^default-src 'none'; script-src 'self';/, 'the reference page: its own CSP')
  t.match(docs.headers, DOCUMENT, 'the reference page: the document set')

  const script = await h.inject({ method: 'GET', url: '/assets/setup.js' })
  t.equal(script.statusCode, 200)
  t.match(script.headers, { 'x-content-type-options': 'nosniff', 'cross-origin-resource-policy': 'same-origin' }, 'a script: nosniff, CORP')
  for (const name of [...DOCUMENT_ONLY, 'api-version', 'x-frame-options']) t.notOk(name in script.headers, `a script: no ${name}`)
  t.not(script.headers['cache-control'], 'no-store', 'a script keeps its own Cache-Control')
})

t.test('an unparsable request, answered by Node\'s parser, carries the API set', async t => {
  const h = await build(t)
  const port = await closedPort()
  await h.app.listen({ port, host: '127.0.0.1' })
  const raw = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => { socket.write('GET /api/health HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n') })
    let out = ''
    socket.on('data', c => { out += c.toString() })
    socket.on('close', () => { resolve(out) })
    socket.on('error', reject)
  })
  t.match(raw, /^HTTP\/1\.1 400 /)
  t.match(raw, /\r\nx-content-type-options: nosniff\r\n/)
  t.match(raw, /\r\nx-frame-options: DENY\r\n/)
  t.match(raw, /\r\ncache-control: no-store\r\n/)
  t.match(raw, /\r\napi-version: \d+\.\d+\.\d+\r\n/)
  t.notMatch(raw, /referrer-policy|cross-origin-opener-policy/i, 'nothing meant for documents')
  t.match(raw, /\r\n\r\n\{"message":/, 'then the ErrorResponse')
})

t.test('HSTS on every kind when served over https', async t => {
  const https = await build(t, { env: { PUBLIC_URL: 'https://workspace.example.com' } })
  for (const url of ['/api/health', '/api/nothing-here', '/login', '/assets/setup.js']) {
    const res = await https.inject({ method: 'GET', url })
    t.equal(res.headers['strict-transport-security'], HSTS, `PUBLIC_URL https: ${url}`)
  }

  const proxied = await build(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  for (const url of ['/api/health', '/login']) {
    const behind = await proxied.inject({ method: 'GET', url, headers: { 'x-forwarded-proto': 'https' } })
    t.equal(behind.headers['strict-transport-security'], HSTS, `X-Forwarded-Proto: https from a trusted proxy: ${url}`)
  }
  const plain = await proxied.inject({ method: 'GET', url: '/api/health', headers: { 'x-forwarded-proto': 'http' } })
  t.notOk(plain.headers['strict-transport-security'], 'X-Forwarded-Proto: http')

  const untrusted = await build(t)
  const spoofed = await untrusted.inject({ method: 'GET', url: '/api/health', headers: { 'x-forwarded-proto': 'https' } })
  t.notOk(spoofed.headers['strict-transport-security'], 'X-Forwarded-Proto from an untrusted client counts for nothing')
})
