// The tests' TypeScript loader: `node --import ./test/helpers/ts-loader.mjs file.ts` (`.taprc`
// and every service or script a test starts). `npm run dev` and the scripts keep tsx.
//
// Why not tsx here: tsx resolves and loads every import of a process, node_modules included,
// through its general hooks (tsconfig paths, extension guessing, CommonJS interop), and a test
// process is mostly start-up. Importing the app cost 2.3 CPU-s through tsx and 1.5 through this
// file (1.0 from the compiled dist/), on each of the ~130 processes a run starts. Measured again
// on 2026-12-07 (tsx 4.23, Node 20, .taprc's node-arg swapped): importing the app 1.4-1.5 CPU-s
// here, 2.2-2.5 through tsx; test/admin/*.test.ts 81-89 CPU-s here, 101-102 through tsx;
// test/contract/*.test.ts 139-165 against 154-180. And tsx's output does not map for coverage
// (no `sourcesContent` unless NODE_V8_COVERAGE is set, whitespace minified): one file under
// `--no-disable-coverage` read 100 % of 239 lines through tsx, 54 % of 20,918 through this file.
//
// What it does, and all it does: in a file of this project (not node_modules), `./x.js` resolves
// to `./x.ts` when that exists (the NodeNext convention the sources use), and a project `.ts` file
// is compiled by esbuild as an ES module, with the project's tsconfig, for this Node version.
// The output is plain (not minified) with a complete inline source map, `sourcesContent`
// included: V8 coverage under `npm run test:coverage` maps back to the right .ts lines through
// it, and so do stack traces (source maps are turned on, as tsx does). Everything else goes to
// Node's own resolution and loading unchanged.
//
// Compiled files are kept in node_modules/.cache/ts-loader, keyed by the file's URL and text, the
// esbuild and Node versions and this file's version: a run compiles only what changed since the
// last one, and concurrent test processes write each entry atomically (rename).
//
// Once the hooks are in place it loads test/helpers/meta-schema-memo.ts (see its header): a
// device that only speeds tests lives with the tests.
//
// Where Node has in-thread hooks (module.registerHooks: Node 22.15+, 24) they are used; on
// Node 20 the same functions run on the loader thread through module.register.
import * as nodeModule from 'node:module'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { isMainThread } from 'node:worker_threads'

const VERSION = '1'
const self = import.meta.url
const root = new URL('../../', self)
const rootHref = root.href
const cacheDir = new URL('node_modules/.cache/ts-loader/', root)
const require = nodeModule.createRequire(self)

/** A file of this project, outside node_modules. */
const ours = url => url.startsWith(rootHref) && !url.includes('/node_modules/')

let esbuild
let options

function compileOptions () {
  esbuild ??= require('esbuild')
  const { compilerOptions } = JSON.parse(readFileSync(new URL('tsconfig.json', root), 'utf8'))
  return {
    key: `${VERSION}\0${esbuild.version}\0${process.versions.node}\0${JSON.stringify(compilerOptions)}`,
    transform: {
      loader: 'ts',
      format: 'esm',
      target: `node${process.versions.node}`,
      sourcemap: 'inline',
      sourcesContent: true,
      tsconfigRaw: { compilerOptions }
    }
  }
}

/** The JavaScript of one project .ts file, from the cache or compiled now. */
function compile (url) {
  const source = readFileSync(fileURLToPath(url), 'utf8')
  options ??= compileOptions()
  const key = createHash('sha256').update(options.key).update('\0').update(url).update('\0').update(source)
    .digest('hex').slice(0, 32)
  const cached = new URL(`${key}.js`, cacheDir)
  try {
    return readFileSync(cached, 'utf8')
  } catch {}
  const { code } = esbuild.transformSync(source, { ...options.transform, sourcefile: url })
  const partial = new URL(`${key}.js.${process.pid}`, cacheDir)
  try {
    mkdirSync(cacheDir, { recursive: true })
    writeFileSync(partial, code)
    renameSync(partial, cached)
  } catch {
    // Not kept (a read-only node_modules, a full disk): the next process compiles it again.
    try { rmSync(partial, { force: true }) } catch {}
  }
  return code
}

/** @type {import('node:module').ResolveHook} */
export function resolve (specifier, context, nextResolve) {
  const parent = context.parentURL
  if (parent !== undefined && specifier.startsWith('.') && specifier.endsWith('.js') && ours(parent)) {
    const ts = new URL(`${specifier.slice(0, -3)}.ts`, parent)
    if (existsSync(ts)) return { url: ts.href, format: 'module', shortCircuit: true }
  }
  return nextResolve(specifier, context)
}

/** @type {import('node:module').LoadHook} */
export function load (url, context, nextLoad) {
  if (url.endsWith('.ts') && ours(url)) return { format: 'module', source: compile(url), shortCircuit: true }
  return nextLoad(url, context)
}

if (isMainThread) {
  process.setSourceMapsEnabled(true)
  if (typeof nodeModule.registerHooks === 'function') nodeModule.registerHooks({ resolve, load })
  else nodeModule.register(self)
  // What only speeds tests, in every test process and every service a test starts, never in the
  // service as users run it: the OpenAPI meta-schema check remembered across binds and processes.
  await import('./meta-schema-memo.ts')
}
