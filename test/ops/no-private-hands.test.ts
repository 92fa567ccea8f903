import t from 'tap'
import { readdir, readFile } from 'node:fs/promises'
import { join, relative, sep } from 'node:path'
import { projectRoot } from '../../src/paths.js'

// Production code uses its dependencies through their public APIs (house style 24, issue 52):
// no private symbol looked up by its description, no V8 flag set from code, no field of pg's
// connection, no method of a library's object replaced. Scanned as text: src/ and handlers/. A hand
// that truly must stay lives under src/lib/workarounds/, one module per need, saying which
// documented behaviour it serves, with a test that fails when the library changes under it.

const WORKAROUNDS = 'src/lib/workarounds/'

/** What a private hand looks like in source text. */
const PATTERNS: Array<[string, RegExp]> = [
  ['a symbol looked up among an object\'s own', /\bgetOwnPropertySymbols\b/],
  ['a symbol of the global registry (a library\'s private key)', /\bSymbol\.for\(/],
  ['a library\'s private symbol found by its description', /\.description\s*===?\s*['"`](?:fastify|pino|pg|undici|nodejs)\./],
  ['pino\'s symbols', /\bpino\.symbols\b|\bsymbols\s*\}\s*from\s*['"]pino['"]/],
  ['a module inside a library\'s lib/ or dist/ (its private parts)', /from\s*['"](?:@[\w-][\w.-]*\/)?[a-z0-9][\w.-]*\/(?:lib|dist|build)\//],
  ['a V8 flag set from code', /\bsetFlagsFromString\b|--allow-natives-syntax/],
  ['a V8 native (%Function)', /(?<![\w'"`])%[A-Z][A-Za-z]+\(/],
  ['the async hook that kept Node\'s tick objects', /['"]TickObject['"]/],
  ['pg\'s connection socket', /\.connection\.stream\b/],
  ['a private field of pg', /\._(?:ending|ended|connected|connecting|queryable|clients|idle|pendingQueue|poolUseCount|activeQuery|queryQueue)\b/],
  ['the module cache', /\brequire\.cache\b/],
  ['a library prototype\'s method replaced', /\.prototype\.[A-Za-z_$][\w$]*\s*=(?!=)/],
  ['a logger\'s child replaced', /\.child\s*=(?!=)/],
  [
    'a method of a library\'s object replaced',
    /\b(?:app|fastify|instance|server|root|log|logger|reply|request|raw|res|req|client|pool|register|registry|histogram)\.[A-Za-z_$][\w$]*\s*=(?!=)\s*(?:function\b|async\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)/
  ]
]

/**
 * Hands found outside src/lib/workarounds/ that are known and owned: each must still be found
 * (so the entry goes when it is removed), none other is allowed.
 */
const PENDING: Record<string, string> = {}

/** The hands in one file's text: the name of each pattern found, with its line. */
function handsIn (text: string): Array<{ what: string, line: number }> {
  const found: Array<{ what: string, line: number }> = []
  text.split('\n').forEach((line, i) => {
    for (const [what, pattern] of PATTERNS) if (pattern.test(line)) found.push({ what, line: i + 1 })
  })
  return found
}

async function * sourceFiles (dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield * sourceFiles(path)
    else if (/\.(?:[mc]?[jt]s|tsx)$/.test(entry.name)) yield path
  }
}

t.test('each pattern catches the hands this service once had', async t => {
  // Lines of the code issue 52 removed, as they were.
  const removed: Array<[string, string]> = [
    ["replyHeadersKey ??= Object.getOwnPropertySymbols(reply).find(s => s.description === 'fastify.reply.headers') ?? null",
      'a symbol looked up among an object\'s own'],
    ["const key = Object.keys(reply).find(k => k.description === 'fastify.reply.headers')",
      'a library\'s private symbol found by its description'],
    ["const kHeaders = Symbol.for('pino.serializers')", 'a symbol of the global registry (a library\'s private key)'],
    ["  if (pgliteWasm === undefined) setFlagsFromString('--liftoff-only')", 'a V8 flag set from code'],
    ['    if (type === \'TickObject\') kept.push(resource)', 'the async hook that kept Node\'s tick objects'],
    [';(client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy()', 'pg\'s connection socket'],
    ['if (client._ending) return', 'a private field of pg'],
    ['  root.child = function (this: Logger, bindings, options) {', 'a logger\'s child replaced'],
    ['Reply.prototype.send = function (payload) {', 'a library prototype\'s method replaced'],
    ['  server.closeIdleConnections = () => {', 'a method of a library\'s object replaced'],
    ["import { kReplyHeaders } from 'fastify/lib/symbols.js'", 'a module inside a library\'s lib/ or dist/ (its private parts)'],
    ["import { fullFormats } from 'ajv-formats/dist/formats.js'", 'a module inside a library\'s lib/ or dist/ (its private parts)'],
    ['%OptimizeFunctionOnNextCall(f)', 'a V8 native (%Function)']
  ]
  for (const [line, what] of removed) t.ok(handsIn(line).some(h => h.what === what), `${what}: ${line.trim()}`)
  // And what is public is not mistaken for a hand.
  for (const line of [
    "reply.header('cache-control', 'no-store')",
    'const present = reply.getHeaders()',
    'client.end().catch(() => {})',
    'route.onResponse = [...[route.onResponse ?? []].flat(), observeAs(label)]',
    "const width = '100%'",
    "import { errorBody } from '../lib/errors.js'",
    "if (typeof p.description === 'string') out.description = p.description",
    'request.log.child({ job: id })'
  ]) t.same(handsIn(line), [], `public: ${line}`)
})

t.test('src/ and handlers/ reach into no library\'s private parts', async t => {
  const seen: Record<string, string[]> = {}
  for (const top of ['src', 'handlers']) {
    for await (const path of sourceFiles(join(projectRoot, top))) {
      const file = relative(projectRoot, path).split(sep).join('/')
      if (file.startsWith(WORKAROUNDS)) continue
      const hands = handsIn(await readFile(path, 'utf8'))
      if (hands.length > 0) seen[file] = hands.map(h => `${h.what} (line ${h.line})`)
    }
  }
  for (const [file, hands] of Object.entries(seen)) {
    const pending = PENDING[file]
    if (pending === undefined) t.fail(`${file}: ${hands.join('; ')}`)
    else t.ok(hands.every(h => h.startsWith(pending)), `${file}: only its known hand (${pending})`)
  }
  for (const [file, what] of Object.entries(PENDING)) {
    t.ok(seen[file], `${file} still has its known hand (${what}); when it is gone, so is its entry here`)
  }
})
