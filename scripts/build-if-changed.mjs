// `npm start`'s prestart: `npm run build` when an input of the build changed since the last build
// it ran, else nothing. Plain JavaScript, and no second npm nor TypeScript's compiler loaded to find
// out: a restart with nothing changed costs this one process (≈ 60 ms) instead of `npm run build`'s
// ≈ 0.7 s (a nested npm, tsc -b comparing timestamps, the console's check), docs/performance.md.
//
// What changed is told by a fingerprint of the inputs: every file and folder of src/, handlers/,
// scripts/, console/ and page-scripts/ (path, size, modification time: a file added, deleted,
// renamed, edited or restored with an older time all change it; page-scripts/ was once missing,
// and npm start served the sign-in pages' scripts as they were at the last other change), openapi.yaml, the tsconfig files, package.json and
// node_modules/.package-lock.json (what `npm ci` installed). The fingerprint of the inputs a
// successful build started from is kept in dist/build-inputs; a failed build keeps none, so every
// later `npm start` runs the build again and reports its errors until they are fixed.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const record = join(root, 'dist', 'build-inputs')
const FOLDERS = ['src', 'handlers', 'scripts', 'console', 'page-scripts']
const FILES = [
  'openapi.yaml', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'node_modules/.package-lock.json'
]

function fingerprint () {
  const hash = createHash('sha256')
  const add = path => {
    const s = statSync(join(root, path), { throwIfNoEntry: false })
    hash.update(s === undefined ? `${path} -\n` : `${path} ${s.size} ${s.mtimeMs}\n`)
  }
  const walk = dir => {
    add(dir)
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else add(path)
    }
  }
  for (const dir of FOLDERS) if (existsSync(join(root, dir))) walk(dir)
  for (const file of FILES) add(file)
  return hash.digest('hex')
}

const before = fingerprint()
const built = existsSync(record) && existsSync(join(root, 'dist', 'src', 'server.js'))
if (!built || readFileSync(record, 'utf8') !== before) {
  process.stdout.write(built
    ? 'npm start: the source changed since the last build: building the service again (npm run build)\n'
    : 'npm start: building the service first (npm run build): about half a minute, once\n')
  const { status } = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' })
  if (status !== 0) process.exit(status ?? 1)
  writeFileSync(record, before)
}
