import t from 'tap'
import { createHash } from 'node:crypto'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { build } from '../helpers/build.js'
import { assertContract } from '../helpers/contract.js'
import { chooseEncoding, consoleAssets, IMMUTABLE } from '../../src/console/assets.js'

// The console's script, its chunks and its styles (GET /static/{asset}, src/console/assets.ts):
// named by their content, compressed at build (brotli and gzip), sent in the encoding the client
// accepts with `Vary: Accept-Encoding` and cached for good (`immutable`); the page that names them
// is no-store and carries no inline style any more. (The bytes on the wire, first load and reload,
// are measured in Chromium by the bench: bench/console.ts.)

const BROWSER = 'gzip, deflate, br, zstd'

t.test('Accept-Encoding: brotli first, then gzip, then the file itself', async t => {
  const cases: Array<[string | undefined, string]> = [
    [BROWSER, 'br'],
    ['gzip, deflate', 'gzip'],
    ['br;q=0, gzip', 'gzip'],
    ['br;q=0.1, gzip;q=1', 'br'],
    ['*', 'br'],
    ['*;q=0, gzip', 'gzip'],
    ['identity', 'identity'],
    ['deflate', 'identity'],
    ['', 'identity'],
    [undefined, 'identity']
  ]
  for (const [header, encoding] of cases) t.equal(chooseEncoding(header), encoding, `${String(header)}: ${encoding}`)
})

t.test('the console page names its script and styles by content; each is served immutable, precompressed', async t => {
  const h = await build(t)
  const page = await h.inject({ method: 'GET', url: '/console/members' })
  t.equal(page.statusCode, 200)
  t.equal(page.headers['cache-control'], 'no-store', 'the page itself is never cached')
  t.notMatch(page.body, /<style/, 'no inline style element: the styles are a file')
  const nonce = /style-src 'nonce-([^']+)'/.exec(String(page.headers['content-security-policy']))?.[1] ?? '?'
  const css = /<link rel="stylesheet" nonce="([^"]+)" href="(\/static\/console\.[0-9a-f]{16}\.css)">/.exec(page.body)
  t.equal(css?.[1], nonce, 'the stylesheet link carries the page\'s nonce')
  const js = /<script type="module" nonce="([^"]+)" src="(\/static\/console\.[0-9a-f]{16}\.js)">/.exec(page.body)
  t.ok(js, 'the script, an ES module, under its hashed name')
  t.equal(js?.[1], nonce, 'under the page\'s nonce (which its imports inherit)')

  // The chunks the script imports (each screen's, and the code they share), followed from file to
  // file: every one a file of the build, named by its content, served by the same route.
  const reached = new Set<string>()
  const follow = async (name: string): Promise<void> => {
    if (reached.has(name)) return
    reached.add(name)
    const code = (await h.inject({ method: 'GET', url: `/static/${name}` })).body
    for (const m of code.matchAll(/["']\.\/(console\.[0-9a-f]{16}\.js)["']/g)) await follow(m[1] ?? '')
  }
  const entry = js?.[2]?.replace('/static/', '') ?? 'none'
  await follow(entry)
  reached.delete(entry)
  const files = consoleAssets().files.filter(f => f.endsWith('.js') && f !== entry)
  t.ok(reached.size >= 12, `the script imports its chunks by their hashed names (${reached.size}: a screen each, and shared)`)
  t.same([...reached].sort(), files.sort(), 'every chunk the build made, and only those')
  const chunks = [...reached].map(f => `/static/${f}`)

  const named = [[js?.[2] ?? '/static/none', /^application\/javascript/], [css?.[2] ?? '/static/none', /^text\/css/]] as const
  for (const [url, type] of [...named, ...chunks.map(url => [url, /^application\/javascript/] as const)]) {
    const plain = await h.inject({ method: 'GET', url })
    assertContract(t, 'GET', url, plain)
    t.equal(plain.statusCode, 200, `${url}: 200`)
    t.match(plain.headers['content-type'], type)
    t.equal(plain.headers['content-encoding'], undefined, `${url}: without Accept-Encoding, the file itself`)
    const body = plain.rawPayload
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
    t.ok(url.includes(`.${hash}.`), `${url}: the name is its content's hash`)
    for (const [accept, encoding, decode] of [
      [BROWSER, 'br', brotliDecompressSync], ['gzip, deflate', 'gzip', gunzipSync]
    ] as const) {
      const res = await h.inject({ method: 'GET', url, headers: { 'accept-encoding': accept } })
      assertContract(t, 'GET', url, res)
      t.equal(res.headers['content-encoding'], encoding, `${url} (${accept}): ${encoding}`)
      // Less than half of the script and the styles; a chunk of a few hundred bytes gains less.
      const bound = chunks.includes(url) ? body.length : body.length / 2
      t.ok(res.rawPayload.length < bound, `${url} (${encoding}): ${res.rawPayload.length} of ${body.length} bytes`)
      t.same(decode(res.rawPayload), body, `${url} (${encoding}): the same file`)
      t.equal(Number(res.headers['content-length']), res.rawPayload.length, 'its length as sent')
    }
    for (const res of [plain]) {
      t.equal(res.headers['cache-control'], IMMUTABLE, `${url}: cached for a year, never revalidated`)
      t.equal(res.headers.vary, 'Accept-Encoding', `${url}: Vary: Accept-Encoding`)
      t.equal(res.headers['x-content-type-options'], 'nosniff')
    }
  }

  const unknown = await h.inject({ method: 'GET', url: '/static/console.0123456789abcdef.js' })
  assertContract(t, 'GET', '/static/console.0123456789abcdef.js', unknown)
  t.equal(unknown.statusCode, 404, 'a hash of no build: 404')
  t.equal(unknown.json().code, 'NOT_FOUND')
  t.equal(unknown.headers['cache-control'], 'no-store', 'and that answer is not cached')
  // Only the published names: not the build's other files, nor a path out of its directory.
  for (const url of ['/static/console.js', '/static/assets.json', '/static/console.0123456789abcdef.js.br']) {
    const res = await h.inject({ method: 'GET', url })
    t.equal(res.statusCode, 404, `${url}: not a hashed asset's name`)
    assertContract(t, 'GET', url, res)
  }
  for (const url of ['/static/..%2Fconsole.js', '/static/Console.0123456789abcdef.js']) {
    const res = await h.inject({ method: 'GET', url })
    t.equal(res.statusCode, 400, `${url}: not a name at all`)
    assertContract(t, 'GET', url, res)
  }
})
