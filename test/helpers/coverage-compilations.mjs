// After `npm run test:coverage`: fails, naming the processes, when one project file was compiled
// to different JavaScript in different processes of the run.
//
// c8 (tap's report) merges V8's coverage by URL before it maps it back through a source map, and
// keeps one source map per URL: ranges of two compilations of src/x.ts merged together are
// nonsense, and it does not say so — lines covered by every test read as uncovered, and files it
// cannot map drop out of the report. A `tsx` child of the bench smoke test (tsx compiles to other
// JavaScript than test/helpers/ts-loader.mjs) took the suite's line coverage from 97 % to 73 %
// this way, silently. Every child a test starts inherits tap's coverage (@tapjs/processinfo through
// NODE_OPTIONS); one that runs the project's TypeScript through another loader turns it off with
// `_TAPJS_PROCESSINFO_COVERAGE_=0` (test/helpers/bench.ts).
//
// Usage: node test/helpers/coverage-compilations.mjs [project root, default: cwd]
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

const root = resolve(process.argv[2] ?? '.')
const rootHref = pathToFileURL(root).href + '/'
const covDir = resolve(root, '.tap/coverage')
const infoDir = resolve(root, '.tap/processinfo')

if (!existsSync(covDir)) {
  console.log('coverage compilations: no .tap/coverage (coverage was off)')
  process.exit(0)
}

/** url → compiled length → coverage files */
const seen = new Map()
let processes = 0
for (const name of readdirSync(covDir)) {
  let cov
  try { cov = JSON.parse(readFileSync(resolve(covDir, name), 'utf8')) } catch { continue }
  processes++
  for (const script of cov.result ?? []) {
    if (!script.url.startsWith(rootHref) || script.url.includes('/node_modules/')) continue
    // `node -e` code is named [evalN] under the working directory: no file, nothing to merge.
    if (!existsSync(fileURLToPath(script.url))) continue
    const length = script.functions[0]?.ranges[0]?.endOffset
    let byLength = seen.get(script.url)
    if (byLength === undefined) seen.set(script.url, byLength = new Map())
    let files = byLength.get(length)
    if (files === undefined) byLength.set(length, files = [])
    files.push(name)
  }
}

/** The command line of the process that wrote a coverage file (tap's processinfo). */
function commandOf (covFile) {
  const info = resolve(infoDir, covFile)
  if (!existsSync(info)) return '(no processinfo)'
  const { argv = [], execArgv = [] } = JSON.parse(readFileSync(info, 'utf8'))
  const command = ['node', ...execArgv, ...argv.slice(1)].join(' ').replaceAll(root + '/', '').replace(/\s+/g, ' ')
  return command.length > 160 ? `${command.slice(0, 160)}…` : command
}

let mixed = 0
for (const [url, byLength] of seen) {
  if (byLength.size < 2) continue
  mixed++
  console.log(`${url.slice(rootHref.length)}: ${byLength.size} compilations`)
  for (const [length, files] of byLength) {
    console.log(`  ${length} characters, ${files.length} process(es), e.g. ${commandOf(files[0])}`)
  }
}
if (mixed > 0) {
  console.log(`coverage compilations: FAIL, ${mixed} file(s) compiled differently across processes; ` +
    'c8 merges their ranges into nonsense. Turn coverage off in the process that used another loader ' +
    '(_TAPJS_PROCESSINFO_COVERAGE_=0) or run it through test/helpers/ts-loader.mjs.')
  process.exit(1)
}
console.log(`coverage compilations: ${seen.size} project files, one compilation each, across ${processes} processes`)
