import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadContract } from '../../src/app.js'
import { pageScriptsDir } from '../../src/http/page-shell.js'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'

// The HTML pages: strict CSP with a per-response nonce, nothing from the request in the markup.
// (test/auth/browser.test.ts runs them in Chromium, which enforces the CSP for real.)

t.test('pages and the identity-provider operations of a service without WorkOS', async t => {
  const h = await build(t)

  await t.test('each page is HTML with a strict, per-response nonce CSP', async t => {
    const nonces = new Set<string>()
    for (const url of ['/', '/signup?token=abc', '/login', '/login?token=abc', '/', '/signup']) {
      const res = await h.inject({ method: 'GET', url })
      assertContract(t, 'GET', url, res)
      t.equal(res.statusCode, 200, url)
      t.match(res.headers['content-type'], /^text\/html; charset=utf-8/)
      const csp = String(res.headers['content-security-policy'])
      const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1]
      t.ok(nonce, `${url}: script-src allows only a nonce`)
      t.match(csp, /default-src 'none'/)
      t.match(csp, /connect-src 'self'/)
      t.match(csp, /frame-ancestors 'none'/)
      t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, `${url}: no unsafe-inline, no wildcard`)
      const scripts = [
        ...res.body.matchAll(/<script([^>]*)>([^<]*)<\/script>/g)
      ].map(m => ({ attrs: m[1], code: m[2] }))
      t.ok(scripts.length > 0)
      // The console's shell is an ES module (its screens are chunks it imports); the pages' scripts are classic.
      const own = /^(?: type="module")? nonce="([^"]+)" src="\/(?:assets\/[a-z-]+|static\/[a-z-]+\.[0-9a-f]{16})\.js"$/
      t.ok(scripts.every(s => own.exec(s.attrs ?? '')?.[1] === nonce && s.code === ''),
        `${url}: every script carries the nonce and is one of the service's own files; no inline code`)
      t.equal(res.headers['referrer-policy'], 'no-referrer', `${url}: tokens in the URL are not sent onwards`)
      t.equal(res.headers['cache-control'], 'no-store')
      t.equal(res.headers['x-content-type-options'], 'nosniff')
      nonces.add(nonce as string)
    }
    t.equal(nonces.size, 6, 'a fresh nonce per response')
  })

  await t.test('the page scripts are static files served as JavaScript, exactly those the contract names', async t => {
    const contract = loadContract() as {
      paths: Record<string, { get: { parameters: Array<{ schema: { enum: string[] } }> } }>
    }
    const named = contract.paths['/assets/{script}']?.get.parameters[0]?.schema.enum ?? []
    t.same(
      [...named].sort(), readdirSync(pageScriptsDir).filter(f => f.endsWith('.js')).sort(),
      'the contract\'s enum lists every page script the build makes (the console\'s bundle is a hashed asset)'
    )
    for (const name of named) {
      const url = `/assets/${name}`
      const res = await h.inject({ method: 'GET', url })
      assertContract(t, 'GET', url, res)
      t.equal(res.statusCode, 200, url)
      t.match(res.headers['content-type'], /^application\/javascript; charset=utf-8/)
      t.equal(res.headers['x-content-type-options'], 'nosniff')
      t.equal(res.body, readFileSync(join(pageScriptsDir, name), 'utf8'), `${url}: the file as it is`)
    }
    const other = await h.inject({ method: 'GET', url: '/assets/pages.ts' })
    t.equal(other.statusCode, 400, 'no other file is served')
  })

  await t.test('nothing from the URL is written into the markup', async t => {
    const evil = '"><script>alert(1)</script><img src=x onerror=alert(2)>'
    for (const path of ['/signup', '/login']) {
      const url = `${path}?token=${encodeURIComponent(evil)}`
      const res = await h.inject({ method: 'GET', url })
      assertContract(t, 'GET', url, res)
      t.equal(res.statusCode, 200)
      t.notMatch(res.body, /alert\(/, `${path}: the token is not reflected`)
    }
    const index = await h.inject({ method: 'GET', url: '/' })
    t.notMatch(index.body, /\/api\/oauth\/login/, 'no identity-provider link when WorkOS is not configured')
    const bundle = /<script [^>]*src="(\/static\/console\.[0-9a-f]{16}\.js)"/.exec(index.body)?.[1] ?? '/static/none'
    t.not(bundle, '/static/none', 'the landing page is the console, which loads its bundle')
    t.match(index.body, /data-identity-provider="no"/, 'and tells it there is no identity provider to offer')
    const script = await h.inject({ method: 'GET', url: bundle })
    assertContract(t, 'GET', bundle, script)
    t.match(script.body, /\/api\/users\/me/, 'which asks the API who is signed in')
  })

  await t.test('without WorkOS configuration the login operations answer 404 IDENTITY_PROVIDER_NOT_CONFIGURED', async t => {
    for (const url of ['/api/oauth/login', '/api/oauth/callback?code=x&state=y']) {
      const res = await h.inject({ method: 'GET', url, headers: { cookie: 'oauth_state=y' } })
      assertContract(t, 'GET', url, res)
      t.equal(res.statusCode, 404, url)
      t.equal(res.json().code, 'IDENTITY_PROVIDER_NOT_CONFIGURED')
      t.equal(res.cookies.find(c => c.name === 'service_session'), undefined)
    }
  })
})
