import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { projectRoot } from '../../src/paths.js'

// `npm run bench` in a test (test/ops/bench-smoke*.test.ts): the options of a smoke run, and the
// command as npm runs it.

/** Rounds, durations and connections at their smallest; the build is the test's own (built.ts). */
export const TINY = ['--no-build', '--no-pin', '--rounds', '1', '--duration', '1', '--warmup', '0', '--connections', '2']
const run = promisify(execFile)

/**
 * `npm run bench -- …args` as npm runs it (tsx): its exit code and output. Under `npm run
 * test:coverage` the child (and the service it starts) records no coverage: tsx compiles the same
 * src/*.ts files to other JavaScript than the tests' loader does, under the same URLs, and c8
 * merges V8's ranges by URL before it maps them back, so one such process turned src/lib/crypto.ts
 * from 100 % to 33 % and whole files to nothing (test/helpers/coverage-compilations.mjs names any
 * such process after a coverage run). Tap collects coverage through @tapjs/processinfo, which
 * every child inherits through NODE_OPTIONS and turns off for `_TAPJS_PROCESSINFO_COVERAGE_=0`.
 */
export async function bench (args: string[]): Promise<{ code: number, out: string }> {
  const env = { ...process.env, LOG_LEVEL: 'warn', _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  try {
    const r = await run(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: projectRoot, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, env
    })
    return { code: 0, out: r.stdout + r.stderr }
  } catch (err) {
    const e = err as { code?: number, stdout?: string, stderr?: string }
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` }
  }
}
