// `npm test`'s pretest: tap builds its Test class with the plugins `.taprc` names only during a
// run, and that run's test processes are still started with the loaders of the plugins it was
// installed with (@tapjs/typescript and @tapjs/mock: hooks on every import of every test file).
// So the first `npm test` after `npm ci` ran a quarter slower than the next. Building first, once
// per install and per `.taprc` (a stamp in node_modules/.cache), makes every run the same.
import { createHash } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const key = createHash('sha256')
  .update(readFileSync(join(root, '.taprc')))
  .update(readFileSync(join(root, 'node_modules/tap/package.json')))
  .digest('hex').slice(0, 16)
const stampDir = join(root, 'node_modules/.cache/tap-build')
const stamp = join(stampDir, key)
if (!existsSync(stamp)) {
  console.log('tap: building it with the plugins .taprc names (once per install)')
  const r = spawnSync(join(root, 'node_modules/.bin/tap'), ['build'], { cwd: root, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status ?? 1)
  mkdirSync(stampDir, { recursive: true })
  writeFileSync(stamp, `${new Date().toISOString()}\n`)
}
