import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { build, type Plugin } from 'esbuild'
import { projectRoot } from '../../src/paths.js'
import { ASSET_MANIFEST, consoleBuildDir } from '../../src/console/assets.js'
import { pageScriptsDir } from '../../src/http/page-shell.js'
import { publishConsole } from './console-publish.js'

// The admin console's bundle (console/*.tsx), built by esbuild during `npm run build` (and so
// `npm start`'s prestart) as ES modules split at the route table's import()s (console/routes.ts):
// the entry (the shell: the app, the navigation, the API client), a chunk per screen, and the
// chunks of code several of them share, so a first load fetches the shell and the one screen it
// opens. Built in memory, then published under content-hashed names with their brotli and gzip
// forms, and dist/console/assets.json naming them (scripts/lib/console-publish.ts).
//
// The console's words are the catalogues' `console` namespace (src/i18n/catalogues/<locale>/
// console.json, the shell's) and a namespace per screen (console-<screen>.json). console/i18n.ts
// import()s `console-words:<locale>`, which this build makes a module of the shell's words and a
// table of that language's screens' words, each an import() of its own: a chunk per language and
// one per screen and language, published like the others; a reader fetches only their language's,
// and a screen's words only with the screen. Each catalogue is its JSON as one string (`export
// default '{…}'`, parsed by the console): esbuild's JSON module would add a named export per key (a
// third more after brotli). JSX's factory is imported by the modules that have JSX (`jsxImport`),
// not injected into every module: esbuild's `inject` gave the words modules an import of Preact's
// chunk too, splitting Preact out of the shell's entry.
//
// The same build compiles the sign-in pages' scripts (page-scripts/*.ts → dist/page-scripts/*.js):
// one file each, not bundled, so they stay classic scripts — page-helpers.js's functions are the
// globals the others call — served as they are by getPageScript (src/auth/pages.ts names them).

const sourceDir = join(projectRoot, 'console')
const cataloguesDir = join(projectRoot, 'src', 'i18n', 'catalogues')
const CONSOLE_CATALOGUE = /[\\/]catalogues[\\/][A-Za-z-]+[\\/]console(-[a-z-]+)?\.json$/
const SCREEN_CATALOGUE = /^console-([a-z-]+)\.json$/

/** A language's console words as a module whose default export is the catalogue's JSON text. */
const consoleWords: Plugin = {
  name: 'console-words',
  setup (b) {
    b.onLoad({ filter: CONSOLE_CATALOGUE }, async ({ path }) => {
      const words = JSON.parse(await readFile(path, 'utf8')) as unknown
      return { contents: JSON.stringify(words), loader: 'text', watchFiles: [path] }
    })
  }
}

/**
 * `console-words:<locale>`: that language's shell words (console.json) as its default export and
 * `screens`, a table of its screens' words (console-<screen>.json) by screen (console/i18n.ts).
 */
const languageChunks: Plugin = {
  name: 'language-chunks',
  setup (b) {
    b.onResolve({ filter: /^console-words:/ }, ({ path }) =>
      ({ path: path.slice('console-words:'.length), namespace: 'console-words' }))
    b.onLoad({ filter: /.*/, namespace: 'console-words' }, async ({ path: locale }) => {
      const folder = join(cataloguesDir, locale)
      const screens = (await readdir(folder)).sort().flatMap(file => {
        const screen = SCREEN_CATALOGUE.exec(file)?.[1]
        if (screen === undefined) return []
        return [`${JSON.stringify(screen)}:()=>import(${JSON.stringify(join(folder, file))})`]
      })
      return {
        contents: `export{default}from${JSON.stringify(join(folder, 'console.json'))};` +
          `export const screens={${screens.join(',')}}`,
        loader: 'js',
        resolveDir: folder,
        watchDirs: [folder]
      }
    })
  }
}

/** JSX's factory (console/jsx.ts), imported by every module that has JSX (read this file's header). */
const JSX_MODULE = /[\\/]console[\\/].+\.tsx$/
/** Each screen, which the build makes import console/common.ts as the entry does (read its header). */
const SCREEN = /[\\/]console[\\/]screens[\\/][^\\/]+\.tsx$/
const jsxImport: Plugin = {
  name: 'jsx-import-and-shared-with-the-shell',
  setup (b) {
    b.onLoad({ filter: JSX_MODULE }, async ({ path }) => {
      const imports = [`import{jsx$h,jsx$Fragment}from${JSON.stringify(join(sourceDir, 'jsx.ts'))};`]
      if (SCREEN.test(path)) imports.push(`import ${JSON.stringify(join(sourceDir, 'common.ts'))};`)
      return { contents: imports.join('') + await readFile(path, 'utf8'), loader: 'tsx' }
    })
  }
}
const pageSourceDir = join(projectRoot, 'page-scripts')
/** Written last by a page-scripts build: what its freshness is measured by. */
const PAGES_BUILT = '.built'
export const consoleBuildOptions = {
  entryPoints: { console: join(sourceDir, 'main.tsx') },
  outdir: consoleBuildDir,
  bundle: true,
  splitting: true,
  format: 'esm' as const,
  minify: true,
  target: 'es2022',
  // JSX as Preact's h(type, props, ...children) (console/jsx.ts): smaller than the
  // automatic runtime's props.children; `npm run typecheck` checks the same JSX against Preact's types.
  jsx: 'transform' as const,
  jsxFactory: 'jsx$h',
  jsxFragment: 'jsx$Fragment',
  plugins: [consoleWords, languageChunks, jsxImport],
  legalComments: 'none' as const,
  // Kept in memory and published under hashed names: nothing of esbuild's own naming is served.
  write: false as const,
  metafile: true as const,
  logLevel: 'warning' as const
}

/** For `--watch`: every rebuild is published under its hashed names too. */
export const publishOnRebuild: Plugin = {
  name: 'publish-hashed',
  setup (b) {
    b.onEnd(async result => {
      if (result.errors.length > 0) return
      const { outputFiles, metafile } = result
      if (outputFiles === undefined || metafile === undefined) throw new Error('console build: nothing to publish')
      await publishConsole(outputFiles, metafile)
    })
  }
}

async function buildConsole (): Promise<void> {
  await mkdir(consoleBuildDir, { recursive: true })
  const result = await build(consoleBuildOptions)
  await publishConsole(result.outputFiles, result.metafile)
}

async function newestSource (dir: string, only = /./): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, await newestSource(path, only))
    else if (only.test(path)) newest = Math.max(newest, (await stat(path)).mtimeMs)
  }
  return newest
}

/** The newest of console/ and the catalogues' console words. */
const newestConsoleSource = async (): Promise<number> =>
  Math.max(await newestSource(sourceDir), await newestSource(cataloguesDir, CONSOLE_CATALOGUE))

/** The pages' scripts, each compiled on its own (TypeScript taken away, nothing bundled or minified). */
async function buildPageScripts (outdir = pageScriptsDir): Promise<void> {
  await mkdir(outdir, { recursive: true })
  const scratch = await mkdtemp(join(outdir, '.build-'))
  try {
    const entryPoints = (await readdir(pageSourceDir)).filter(f => f.endsWith('.ts')).map(f => join(pageSourceDir, f))
    await build({ entryPoints, outdir: scratch, target: 'es2022', logLevel: 'warning' })
    for (const file of await readdir(scratch)) await rename(join(scratch, file), join(outdir, file))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
  await writeFile(join(outdir, PAGES_BUILT), '')
}

const builtAt = async (file: string): Promise<number> => await stat(file).then(s => s.mtimeMs, () => 0)

/**
 * Build the console unless dist/console/assets.json is newer than every file of console/ (and the
 * console words of the catalogues), and the
 * pages' scripts unless they are newer than every file of page-scripts/ (the tests' way).
 */
export async function ensureConsoleBuilt (): Promise<void> {
  if (await builtAt(join(consoleBuildDir, ASSET_MANIFEST)) < await newestConsoleSource()) await buildConsole()
  if (await builtAt(join(pageScriptsDir, PAGES_BUILT)) < await newestSource(pageSourceDir)) await buildPageScripts()
}
