import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { build } from 'esbuild'
import { projectRoot } from '../../src/paths.js'
import { consoleBuildDir } from '../../src/console/page.js'

// The admin console's bundle (console/*.tsx → dist/console/console.js and console.css), built by
// esbuild during `npm run build` (and so `npm start`'s prestart). Written to a scratch directory
// first and renamed into place, so a server reading the files never sees half of one.

const sourceDir = join(projectRoot, 'console')
export const consoleBuildOptions = {
  entryPoints: { console: join(sourceDir, 'main.tsx') },
  bundle: true,
  minify: true,
  format: 'iife' as const,
  target: 'es2022',
  jsx: 'automatic' as const,
  jsxImportSource: 'preact',
  legalComments: 'none' as const,
  logLevel: 'warning' as const
}

async function buildConsole (outdir = consoleBuildDir): Promise<void> {
  await mkdir(outdir, { recursive: true })
  const scratch = await mkdtemp(join(outdir, '.build-'))
  try {
    await build({ ...consoleBuildOptions, outdir: scratch })
    for (const file of await readdir(scratch)) await rename(join(scratch, file), join(outdir, file))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

async function newestSource (dir: string): Promise<number> {
  let newest = 0
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? await newestSource(path) : (await stat(path)).mtimeMs)
  }
  return newest
}

/** Build unless dist/console/console.js is newer than every file of console/ (the tests' way). */
export async function ensureConsoleBuilt (): Promise<void> {
  const built = await stat(join(consoleBuildDir, 'console.js')).then(s => s.mtimeMs, () => 0)
  if (built < await newestSource(sourceDir)) await buildConsole()
}
