import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { projectRoot } from '../../src/paths.js'

// test/helpers/coverage-compilations.mjs, run after `npm run test:coverage`: the check that a
// project file was compiled to one JavaScript in every process of the run. A bench child running
// tsx under tap's coverage silently took the suite's lines from 97 % to 73 % (c8 merges ranges
// of two compilations by URL); this is the loud failure instead.

const run = promisify(execFile)
const script = join(projectRoot, 'test/helpers/coverage-compilations.mjs')

/** A fresh directory, removed when the test ends. */
function tempDir (t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'coverage-compilations-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  return dir
}

/** A project root with src/x.ts and one coverage file per process, each compiling x.ts to `length` characters. */
function runOf (dir: string, processes: Array<{ uuid: string, length: number, argv: string[] }>): void {
  mkdirSync(join(dir, 'src'), { recursive: true })
  mkdirSync(join(dir, '.tap/coverage'), { recursive: true })
  mkdirSync(join(dir, '.tap/processinfo'), { recursive: true })
  writeFileSync(join(dir, 'src/x.ts'), 'export const x = 1\n')
  const url = pathToFileURL(join(dir, 'src/x.ts')).href
  for (const p of processes) {
    const functions = [{ functionName: '', ranges: [{ startOffset: 0, endOffset: p.length, count: 1 }], isBlockCoverage: true }]
    writeFileSync(join(dir, '.tap/coverage', `${p.uuid}.json`), JSON.stringify({ result: [{ scriptId: '1', url, functions }] }))
    writeFileSync(join(dir, '.tap/processinfo', `${p.uuid}.json`), JSON.stringify({ argv: ['/usr/bin/node', ...p.argv], execArgv: [] }))
  }
}

t.test('one compilation per file passes', async t => {
  const dir = tempDir(t)
  runOf(dir, [
    { uuid: 'a', length: 120, argv: ['test/a.test.ts'] },
    { uuid: 'b', length: 120, argv: ['test/b.test.ts'] }
  ])
  const { stdout } = await run(process.execPath, [script, dir])
  t.match(stdout, /1 project files, one compilation each, across 2 processes/)
})

t.test('a second compilation fails and names the process that made it', async t => {
  const dir = tempDir(t)
  runOf(dir, [
    { uuid: 'a', length: 120, argv: ['test/a.test.ts'] },
    { uuid: 'b', length: 120, argv: ['test/b.test.ts'] },
    { uuid: 'c', length: 57, argv: ['bench/run.ts', '--help'] }
  ])
  const failed = await run(process.execPath, [script, dir])
    .then(() => null, (err: { code: number, stdout: string }) => err)
  t.equal(failed?.code, 1, 'exit 1')
  t.match(failed?.stdout, /src\/x\.ts: 2 compilations/)
  t.match(failed?.stdout, /57 characters, 1 process\(es\), e\.g\. node bench\/run\.ts --help/)
  t.match(failed?.stdout, /FAIL, 1 file\(s\) compiled differently/)
})
