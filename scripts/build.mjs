// `npm run build` (and `npm start`'s prestart when an input changed): the steps, each said before
// it starts and timed when it ends, so the first `npm start` — half a minute of compiling on a small
// machine — is not half a minute of silence. A failing step stops the build with its exit code.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const tsc = join(root, 'node_modules', '.bin', 'tsc')
const steps = [
  ['compiling the TypeScript of src/, handlers/ and scripts/ (tsc)', tsc, ['-b', 'tsconfig.build.json']],
  ['bundling the admin console (esbuild)', process.execPath, ['dist/scripts/build-console.js']],
  ['compiling the contract, openapi.yaml, for the service to load', process.execPath, ['dist/scripts/build-contract.js']]
]
const started = Date.now()
const seconds = since => `${((Date.now() - since) / 1000).toFixed(1)} s`
for (const [i, [what, command, args]] of steps.entries()) {
  process.stdout.write(`build ${i + 1}/${steps.length}: ${what}…\n`)
  const at = Date.now()
  const { status, signal } = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
  if (status !== 0) {
    process.stdout.write(`build ${i + 1}/${steps.length} failed (${signal ?? `exit ${status}`}): see above\n`)
    process.exit(status ?? 1)
  }
  process.stdout.write(`build ${i + 1}/${steps.length}: done in ${seconds(at)}\n`)
}
process.stdout.write(`build: done in ${seconds(started)}\n`)
