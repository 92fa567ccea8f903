import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'

// npm start rebuilds when an input of the build changed (scripts/build-if-changed.mjs fingerprints
// its folders). Every folder the build reads must be one of them: page-scripts/ was not, and an
// edited sign-in or reference page script was served as it was until something else changed.

const read = (file: string) => readFileSync(join(projectRoot, file), 'utf8')

t.test('the fingerprint covers every folder the build compiles or bundles', async t => {
  const listed = /const FOLDERS = \[([^\]]*)\]/.exec(read('scripts/build-if-changed.mjs'))?.[1] ?? ''
  const folders = [...listed.matchAll(/'([^']+)'/g)].map(m => m[1])
  const tsc = (JSON.parse(read('tsconfig.build.json')) as { include: string[] }).include
  const bundled = [...read('scripts/lib/console-build.ts').matchAll(/join\(projectRoot, '([^']+)'\)/g)]
    .map(m => m[1] as string).filter(dir => !dir.startsWith('dist'))
  t.ok(bundled.includes('console') && bundled.includes('page-scripts'), `the bundles' sources: ${bundled.join(', ')}`)
  for (const dir of [...tsc, ...bundled]) t.ok(folders.includes(dir), `${dir}/ is fingerprinted`)
})
