// Real line coverage of src/ and handlers/ under tap (loaded by `.taprc` after `--import=tsx`).
//
// tap records V8 coverage through the inspector and maps it back to the .ts files through the
// source maps Node keeps for each module. tsx's output does not map well enough for that:
//  - its inline maps carry no `sourcesContent` unless NODE_V8_COVERAGE is set (tsx keys on c8's
//    variable, privatenumber/tsx#433; tap does not set it). Node reports `[null]`, v8-to-istanbul
//    takes that null as the original text, and every file becomes one covered line: a false
//    100 % over ~70 "lines";
//  - it compiles with `minifyWhitespace`, and the ends of V8's ranges then map to the wrong
//    places: with the text put back, whole functions that never ran (the PostgreSQL pool in
//    src/db/client.ts under PGlite, RedisWindowCounter without Redis) still count as covered.
// So for the files whose coverage is reported, this load hook runs after tsx (which still
// resolves `./x.js` to `./x.ts` and decides the format) and replaces the source with esbuild's
// plain, unminified transform of the file, with the same tsconfig, and a complete inline map.
// Everything else (tests, scripts, node_modules) keeps tsx's output.
//
// Child processes started with `node --import tsx …` (the server, scripts) inherit the hook
// through NODE_OPTIONS. Off when tap collects no coverage (`_TAPJS_PROCESSINFO_COVERAGE_=0`,
// which tap sets for every test process when coverage is disabled).
//
// Where Node has in-thread hooks (module.registerHooks: Node 22.15+, 24) tsx uses them, and an
// off-thread hook registered after them would run *inside* tsx's (tsx would then compile and
// minify this hook's output again). There this hook is an in-thread one too, registered last, so
// it is the outermost again and sees tsx's result, as `register` does on Node 20.
import * as nodeModule from 'node:module'
import { readFile } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { isMainThread } from 'node:worker_threads'

const self = import.meta.url
const root = new URL('../../', self).href
const covered = new RegExp(`^${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(src|handlers)/(?!generated/)[^?#]*\\.ts$`)

if (isMainThread && process.env._TAPJS_PROCESSINFO_COVERAGE_ !== '0' &&
    process.execArgv.some(a => /(^|[=/])tsx($|\/)/.test(a))) {
  // In a child, NODE_OPTIONS imports run before the command line's `--import tsx`: load tsx
  // first (the later `--import tsx` is then the same, already evaluated module), so that this
  // hook is registered after tsx's and runs on its output.
  await import('tsx')
  if (typeof nodeModule.registerHooks === 'function') nodeModule.registerHooks({ load: loadSync })
  else nodeModule.register(self)
  if (!(process.env.NODE_OPTIONS ?? '').includes(self)) {
    process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --import=${self}`.trim()
  }
}

let esbuild
let tsconfigRaw

/** esbuild's plain transform of one covered file, with a complete inline map. */
function transformOptions (url) {
  tsconfigRaw ??= { compilerOptions: JSON.parse(readFileSync(new URL('tsconfig.json', root), 'utf8')).compilerOptions }
  return {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcefile: url,
    sourcemap: 'inline',
    sourcesContent: true,
    tsconfigRaw
  }
}

/** The in-thread variant of `load` below (module.registerHooks wants synchronous hooks). */
function loadSync (url, context, nextLoad) {
  const result = nextLoad(url, context)
  if (!covered.test(url) || result.format !== 'module' || result.source == null) return result
  const { transformSync } = nodeModule.createRequire(self)('esbuild')
  const { code } = transformSync(readFileSync(new URL(url), 'utf8'), transformOptions(url))
  return { ...result, source: code }
}

/** @type {import('node:module').LoadHook} */
export async function load (url, context, nextLoad) {
  const result = await nextLoad(url, context)
  if (!covered.test(url) || result.format !== 'module' || result.source == null) return result
  esbuild ??= await import('esbuild')
  const { code } = await esbuild.transform(await readFile(new URL(url), 'utf8'), transformOptions(url))
  return { ...result, source: code }
}
