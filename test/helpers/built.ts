import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { until } from './service-process.js'

// What `npm run build` makes (dist/: the compiled service and scripts, the console's bundle, the
// compiled contract), for the test files that run it: the bench smoke runs (--no-build) and
// npm-start. Made as `npm start`'s prestart makes it (scripts/build-if-changed.mjs: a build only
// when an input changed since the last one, else ≈ 60 ms), so a run builds at most once, whichever
// file comes first. One at a time: the files run in parallel and share dist/, and two builds at
// once (npm start's prestart beside a bench file's tsc -b, as it was) wrote the same files and
// build record together. A directory made atomically is the lock, taken over when its holder has
// been gone for 10 minutes.

const lock = join(tmpdir(), `dist-build-${createHash('sha256').update(projectRoot).digest('hex').slice(0, 12)}.lock`)

/** Builds dist/ if an input changed since its last build; its exit status and output. */
export async function ensureBuilt (): Promise<{ status: number | null, output: string }> {
  await until('the build lock (another test file is building dist/)', () => {
    try {
      mkdirSync(lock)
      return true
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
      if (age > 600_000) rmSync(lock, { recursive: true, force: true })
      return undefined
    }
  }, 660_000, 250)
  try {
    const r = spawnSync(process.execPath, ['scripts/build-if-changed.mjs'], {
      cwd: projectRoot, encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' }
    })
    return { status: r.status, output: `${r.stdout}${r.stderr}` }
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}
