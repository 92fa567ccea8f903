import t from 'tap'
import { connect } from 'node:net'
import { build } from '../helpers/build.js'
import { HSTS } from '../../src/plugins/helmet.js'
import { closedPort } from '../helpers/smtp.js'

// Security headers (@fastify/helmet, src/plugins/helmet.ts) on every kind of answer: JSON, errors
// from each place that answers (handler, security, validation, not-found, the router, Node's HTTP
// parser), pages and scripts; the pages keep exactly one CSP, their own nonce policy. HSTS only
// over https: PUBLIC_URL https, or X-Forwarded-Proto https from a trusted proxy.

const EXPECTED = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin'
}
const API_CSP = "default-src 'none';frame-ancestors 'none'"

t.test('every kind of answer carries the headers; pages keep their one nonce CSP', async t => {
  const h = await build(t)
  const cases: Array<[string, string, number, string]> = [
    ['GET', '/api/health', 200, 'a JSON answer'],
    ['GET', '/api/users/me', 401, 'a security refusal'],
    ['GET', '/api/nothing-here', 404, 'the not-found handler'],
    ['POST', '/api/auth/login-link', 400, 'a validation error'],
    ['POST', `/api/invitations/${'a'.repeat(300)}/resend`, 400, 'a router refusal (parameter too long)'],
    ['GET', '/assets/setup.js', 200, 'a page script']
  ]
  for (const [method, url, status, what] of cases) {
    const res = await h.inject({
      method: method as 'GET' | 'POST',
      url,
      headers: { cookie: 'service_session=x', 'content-type': 'application/json' },
      ...(method === 'POST' ? { payload: '{"email":"not an address"}' } : {})
    })
    t.equal(res.statusCode, status, `${what}: ${status}`)
    t.match(res.headers, EXPECTED, `${what}: the security headers`)
    t.equal(res.headers['content-security-policy'], API_CSP, `${what}: the API's CSP`)
    t.notOk(res.headers['strict-transport-security'], `${what}: no HSTS over plain http`)
  }
  for (const url of ['/', '/login', '/signup', '/setup']) {
    const res = await h.inject({ method: 'GET', url })
    t.equal(res.statusCode, 200)
    t.match(res.headers, EXPECTED, `${url}: the security headers`)
    // One header, one value: the page's policy replaced the API's instead of being added to it.
    const csp = res.headers['content-security-policy']
    t.type(csp, 'string', `${url}: one CSP header`)
    const nonce = /script-src 'nonce-([^']+)'/.exec(String(csp))?.[1]
    t.ok(nonce, `${url}: the page's nonce policy`)
    t.match(res.body, `<script nonce="${nonce ?? '?'}" src="/assets/`, `${url}: whose nonce the scripts carry`)
    t.equal(res.headers['cache-control'], 'no-store')
  }
  const docs = await h.inject({ method: 'GET', url: '/api/docs' })
  t.match(docs.headers['content-security-policy'], /^default-src 'none'; script-src 'self';/, 'the reference page: its own CSP')
})

t.test('an unparsable request, answered by Node\'s parser, carries them too', async t => {
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
  t.match(raw, /\r\n\r\n\{"message":/, 'then the ErrorResponse')
})

t.test('HSTS when served over https', async t => {
  const https = await build(t, { env: { PUBLIC_URL: 'https://workspace.example.com' } })
  for (const url of ['/api/health', '/api/nothing-here', '/login']) {
    const res = await https.inject({ method: 'GET', url })
    t.equal(res.headers['strict-transport-security'], HSTS, `PUBLIC_URL https: ${url}`)
  }

  const proxied = await build(t, { env: { TRUST_PROXY: '127.0.0.1' } })
  const behind = await proxied.inject({ method: 'GET', url: '/api/health', headers: { 'x-forwarded-proto': 'https' } })
  t.equal(behind.headers['strict-transport-security'], HSTS, 'X-Forwarded-Proto: https from a trusted proxy')
  const plain = await proxied.inject({ method: 'GET', url: '/api/health', headers: { 'x-forwarded-proto': 'http' } })
  t.notOk(plain.headers['strict-transport-security'], 'X-Forwarded-Proto: http')

  const untrusted = await build(t)
  const spoofed = await untrusted.inject({ method: 'GET', url: '/api/health', headers: { 'x-forwarded-proto': 'https' } })
  t.notOk(spoofed.headers['strict-transport-security'], 'X-Forwarded-Proto from an untrusted client counts for nothing')
})
