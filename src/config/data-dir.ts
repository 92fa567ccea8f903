import { mkdirSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs'
import { dirname, join } from 'node:path'
import { StartupError } from './error.js'

const FIX = 'set DATA_DIR to a directory this service may write'

/**
 * Makes DATA_DIR (and its missing parents), then proves it writable, or throws a StartupError
 * naming it. The parents are made one at a time from the nearest existing one: Node's recursive
 * mkdir never returns for a path under /proc (each level answers ENOENT, and it retries).
 */
export function makeDataDir (dir: string): void {
  const missing: string[] = []
  let at = dir
  for (;;) {
    const stat = statOrNothing(at)
    if (stat !== undefined) {
      if (!stat.isDirectory()) throw new StartupError('DATA_DIR', `cannot make ${dir}: ${at} is not a directory`, FIX)
      break
    }
    missing.unshift(at)
    const parent = dirname(at)
    if (parent === at) break
    at = parent
  }
  try {
    for (const d of missing) mkdirSync(d)
    const probe = join(dir, `.write-check-${process.pid}`)
    writeFileSync(probe, '')
    rmSync(probe)
  } catch (err) {
    const e = err as NodeJS.ErrnoException
    throw new StartupError('DATA_DIR', `cannot write ${dir} (${e.code ?? e.message})`, FIX, { cause: err })
  }
}

/** A path's stat, or undefined when nothing is there (ENOENT) or a parent is a file (ENOTDIR). */
function statOrNothing (path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw new StartupError('DATA_DIR', `cannot read ${path} (${code ?? (err as Error).message})`, FIX, { cause: err })
  }
}
