import { execFile } from 'node:child_process'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { projectRoot } from '../../src/paths.js'

const run = promisify(execFile)

/** Runs node_modules/.bin/`name` in `cwd` (default: the project): its exit code and standard output. */
export async function runBin (name: string, args: string[], cwd = projectRoot): Promise<{ code: number, out: string }> {
  try {
    const { stdout } = await run(join(projectRoot, 'node_modules/.bin', name), args, { cwd, maxBuffer: 16 << 20 })
    return { code: 0, out: stdout }
  } catch (err) {
    const e = err as { code?: number, stdout?: string }
    return { code: e.code ?? -1, out: e.stdout ?? '' }
  }
}
