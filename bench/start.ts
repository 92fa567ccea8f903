import { mkdtempSync, renameSync, rmSync } from 'node:fs'
import { compiledContractPath } from '../src/contract-file.js'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startCommand } from '../scripts/lib/start-command.js'
import { timeToFirst200, type StartTime } from '../scripts/lib/start-time.js'
import { median } from './load.js'
import type { Target } from './report.js'

// Before the load: how the embedded default starts (issue 20's restart and memory targets), on
// an empty DATA_DIR and again on the one it made, from spawning to the first 200 on /api/health.
//  - first start: `node dist/src/server.js` (with npm start's node flags) on an empty DATA_DIR
//    (initdb in a child process), and the highest resident memory of its process group
//    meanwhile (the service and that child);
//  - restart: `npm start` (its incremental build finds nothing to do) against
//    `node dist/src/server.js`, alternating, `runs` of each; the median wall time of each;
//  - restart without the compiled contract: `node dist/src/server.js` with dist/contract.json
//    moved aside (src/contract-file.ts), as after an edit of the contract not built yet.

const env = (dataDir: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH, HOME: process.env.HOME, APP_ENV: 'local', LOG_LEVEL: 'warn', DATA_DIR: dataDir
})
const seconds = (xs: StartTime[]): string => {
  const s = xs.map(x => x.ms / 1000).sort((a, b) => a - b)
  return `${median(s).toFixed(2)} s (${(s[0] ?? 0).toFixed(2)}–${(s.at(-1) ?? 0).toFixed(2)})`
}

export async function measureStarts (runs: number, write: (line: string) => void): Promise<Target[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-start-'))
  try {
    // npm start's command without npm (and its incremental build): node, its flags, the script.
    const { nodeFlags, script } = startCommand()
    const node = [process.execPath, [...nodeFlags, script]] as const
    const first = await timeToFirst200(node[0], [...node[1]], env(dir))
    write(`start: first start, empty DATA_DIR: first 200 after ${(first.ms / 1000).toFixed(2)} s, ` +
      `peak RSS of the service and its initdb child ${first.peakGroupRssMb.toFixed(0)} MB\n`)
    const direct: StartTime[] = []
    const npm: StartTime[] = []
    const uncached: StartTime[] = []
    for (let i = 0; i < runs; i++) {
      direct.push(await timeToFirst200(node[0], [...node[1]], env(dir)))
      npm.push(await timeToFirst200('npm', ['start', '--silent'], env(dir)))
      renameSync(compiledContractPath, `${compiledContractPath}.aside`)
      try {
        uncached.push(await timeToFirst200(node[0], [...node[1]], env(dir)))
      } finally {
        renameSync(`${compiledContractPath}.aside`, compiledContractPath)
      }
    }
    const cpu = (xs: StartTime[]): string => `${median(xs.map(x => x.cpuSeconds)).toFixed(2)} CPU-s`
    write(`start: restart to first 200, node dist/src/server.js ${seconds(direct)}, npm start ${seconds(npm)}; ` +
      `restart peak RSS ${Math.max(...direct.map(x => x.peakGroupRssMb)).toFixed(0)} MB\n`)
    write(`start: restart with the compiled contract ${seconds(direct)} (${cpu(direct)}), ` +
      `without it ${seconds(uncached)} (${cpu(uncached)})\n`)
    const ratio = median(npm.map(x => x.ms)) / median(direct.map(x => x.ms))
    return [
      {
        target: 'restart: npm start ≤ 1.3× node dist/src/server.js (PGlite)', value: ratio, max: 1.3, met: ratio <= 1.3
      },
      {
        target: 'first start: first 200 < 3.8 s on an empty DATA_DIR (PGlite)',
        value: first.ms / 1000,
        max: 3.8,
        met: first.ms < 3800
      },
      {
        target: 'first start: peak RSS of the service and initdb ≤ 500 MB (PGlite)',
        value: first.peakGroupRssMb,
        max: 500,
        met: first.peakGroupRssMb <= 500
      }
    ]
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
