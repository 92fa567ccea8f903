import { createHash } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build, type Plugin } from 'esbuild'
import { minify } from 'terser'
import { projectRoot } from '../../src/paths.js'
import { ASSET_MANIFEST, HASHED_ASSET, consoleBuildDir, type AssetManifest } from '../../src/console/assets.js'
import { pageScriptsDir } from '../../src/http/page-shell.js'

// The admin console's bundle (console/*.tsx → dist/console/console.js and console.css), built by
// esbuild during `npm run build` (and so `npm start`'s prestart). Written to a scratch directory
// first and renamed into place, so a server reading the files never sees half of one.
//
// Then published under content-hashed names (console.<hash>.js, console.<hash>.css), each beside
// its brotli (.br) and gzip (.gz) forms compressed once here at their best levels, and named by
// dist/console/assets.json, which the console page reads (src/console/assets.ts serves them,
// immutable). A name is its content: a file once published never changes.
//
// The same build compiles the sign-in pages' scripts (page-scripts/*.ts → dist/page-scripts/*.js):
// one file each, not bundled, so they stay classic scripts — page-helpers.js's functions are the
// globals the others call — served as they are by getPageScript (src/auth/pages.ts names them).

const sourceDir = join(projectRoot, 'console')
const pageSourceDir = join(projectRoot, 'page-scripts')
/** Written last by a page-scripts build: what its freshness is measured by. */
const PAGES_BUILT = '.built'
export const consoleBuildOptions = {
  entryPoints: { console: join(sourceDir, 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'iife' as const,
  target: 'es2022',
  // JSX as Preact's h(type, props, ...children) (console/jsx.ts): smaller than the
  // automatic runtime's props.children; `npm run typecheck` checks the same JSX against Preact's types.
  jsx: 'transform' as const,
  jsxFactory: 'jsx$h',
  jsxFragment: 'jsx$Fragment',
  inject: [join(sourceDir, 'jsx.ts')],
  legalComments: 'none' as const,
  logLevel: 'warning' as const
}

/** Writes `name` atomically: a scratch file renamed into place. */
async function writeAtomic (dir: string, name: string, data: Buffer | string): Promise<void> {
  const scratch = join(dir, `.${name}.${process.pid}.tmp`)
  await writeFile(scratch, data)
  await rename(scratch, join(dir, name))
}

/**
 * esbuild's bundle minified once more by terser (two compress passes, names by frequency): about
 * 0.9 kB less after brotli (issue 43's 25 kB on the wire). Rewrites `dir`/console.js in place.
 */
async function minifyScript (dir: string): Promise<void> {
  const file = join(dir, 'console.js')
  const terser = { compress: { passes: 2 }, mangle: true, format: { comments: false } }
  const { code } = await minify(await readFile(file, 'utf8'), terser)
  if (code === undefined) throw new Error('terser returned nothing for console.js')
  await writeAtomic(dir, 'console.js', code)
}

/**
 * Publishes console.js and console.css of `outdir` under their content-hashed names, with their
 * .br and .gz, then the manifest naming them. Hashed files of neither this build nor the one
 * before are removed (a page loaded just before a rebuild still finds its files).
 */
async function publishHashed (outdir = consoleBuildDir): Promise<AssetManifest> {
  const manifest: Record<string, string> = {}
  for (const source of ['console.js', 'console.css'] as const) {
    const body = await readFile(join(outdir, source))
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
    const name = source.replace(/\.(js|css)$/, `.${hash}.$1`)
    manifest[source] = name
    await writeAtomic(outdir, `${name}.br`, brotliCompressSync(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length
      }
    }))
    await writeAtomic(outdir, `${name}.gz`, gzipSync(body, { level: constants.Z_BEST_COMPRESSION }))
    await writeAtomic(outdir, name, body)
  }
  const previous = await readFile(join(outdir, ASSET_MANIFEST), 'utf8')
    .then(text => Object.values(JSON.parse(text) as Record<string, string>), () => [])
  await writeAtomic(outdir, ASSET_MANIFEST, JSON.stringify(manifest))
  const keep = new Set([...Object.values(manifest), ...previous])
  for (const file of await readdir(outdir)) {
    const base = file.replace(/\.(br|gz)$/, '')
    if (HASHED_ASSET.test(base) && !keep.has(base)) await rm(join(outdir, file), { force: true })
  }
  return manifest as unknown as AssetManifest
}

/** For `--watch`: every rebuild is published under its hashed names too. */
export const publishOnRebuild: Plugin = {
  name: 'publish-hashed',
  setup (b) {
    b.onEnd(async result => {
      if (result.errors.length === 0) { await minifyScript(consoleBuildDir); await publishHashed() }
    })
  }
}

async function buildConsole (outdir = consoleBuildDir): Promise<void> {
  await mkdir(outdir, { recursive: true })
  const scratch = await mkdtemp(join(outdir, '.build-'))
  try {
    await build({ ...consoleBuildOptions, outdir: scratch })
    await minifyScript(scratch)
    for (const file of await readdir(scratch)) await rename(join(scratch, file), join(outdir, file))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
  await publishHashed(outdir)
}

async function newestSource (dir: string): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? await newestSource(path) : (await stat(path)).mtimeMs)
  }
  return newest
}

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
 * Build the console unless dist/console/assets.json is newer than every file of console/, and the
 * pages' scripts unless they are newer than every file of page-scripts/ (the tests' way).
 */
export async function ensureConsoleBuilt (): Promise<void> {
  if (await builtAt(join(consoleBuildDir, ASSET_MANIFEST)) < await newestSource(sourceDir)) await buildConsole()
  if (await builtAt(join(pageScriptsDir, PAGES_BUILT)) < await newestSource(pageSourceDir)) await buildPageScripts()
}
