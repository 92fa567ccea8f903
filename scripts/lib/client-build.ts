import { execFile } from 'node:child_process'
import { copyFile, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { projectRoot } from '../../src/paths.js'

// The typed client package (clients/typescript/) built into its dist/: tsc compiles the package's
// source with the generated contract types (src/generated/openapi.ts, which the source only
// re-exports in the repository) copied beside it, so dist/ holds index.js, index.d.ts and
// openapi.d.ts and needs nothing outside the package. Compiled in a scratch folder inside dist/
// (so `openapi-fetch` resolves from the project's node_modules) and renamed into place.

export const clientDir = join(projectRoot, 'clients', 'typescript')
const distDir = join(clientDir, 'dist')
const inputs = [join(clientDir, 'src', 'index.ts'), join(projectRoot, 'src', 'generated', 'openapi.ts')]

/** Strict, as a consumer of a client compiles it (scripts/client-check.ts too). */
export const consumerCompilerOptions = {
  target: 'ES2022',
  module: 'NodeNext',
  moduleResolution: 'NodeNext',
  lib: ['ES2023', 'DOM', 'DOM.Iterable'],
  types: [],
  strict: true,
  noUncheckedIndexedAccess: true,
  verbatimModuleSyntax: true
}

const tsconfig = {
  compilerOptions: {
    ...consumerCompilerOptions,
    exactOptionalPropertyTypes: true,
    declaration: true,
    skipLibCheck: true,
    rootDir: 'src',
    outDir: 'out'
  },
  include: ['src']
}

export async function buildClient (): Promise<void> {
  await mkdir(distDir, { recursive: true })
  const scratch = join(distDir, `.build-${process.pid}`)
  try {
    await mkdir(join(scratch, 'src'), { recursive: true })
    await copyFile(inputs[0] as string, join(scratch, 'src', 'index.ts'))
    await copyFile(inputs[1] as string, join(scratch, 'src', 'openapi.ts'))
    // The package says "type": "module"; the scratch folder must too, for NodeNext to emit ESM.
    await writeFile(join(scratch, 'package.json'), JSON.stringify({ type: 'module', private: true }))
    await writeFile(join(scratch, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2))
    const tsc = join(projectRoot, 'node_modules', '.bin', 'tsc')
    await promisify(execFile)(tsc, ['-p', join(scratch, 'tsconfig.json')])
    const out = join(scratch, 'out')
    for (const file of await readdir(out)) await rename(join(out, file), join(distDir, file))
  } finally {
    await rm(scratch, { recursive: true, force: true })
  }
}

/** Build unless dist/index.js is newer than the package's source and the generated types (the tests' way). */
export async function ensureClientBuilt (): Promise<void> {
  const built = await stat(join(distDir, 'index.js')).then(s => s.mtimeMs, () => 0)
  const newest = Math.max(...await Promise.all(inputs.map(async f => (await stat(f)).mtimeMs)))
  if (built < newest) await buildClient()
}
