import { mkdir, mkdtemp, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
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
// The same build compiles the sign-in pages' scripts (page-scripts/*.ts → dist/page-scripts/*.js):
// one file each, not bundled, so they stay classic scripts — page-helpers.js's functions are the
// globals the others call — served as they are by getPageScript (src/auth/pages.ts names them).

const sourceDir = join(projectRoot, 'console')
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
  inject: [join(sourceDir, 'jsx.ts')],
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
