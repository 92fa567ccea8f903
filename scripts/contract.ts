// The contract's versions (docs/contract-versioning.md):
//   npm run contract:check      the CI gate: openapi.yaml against the last released contract
//                               (contract/releases/): the version bumped as its changes need, the
//                               packages at that version, docs/contract-changelog.md current
//   npm run contract:changelog  rewrites docs/contract-changelog.md
//   npm run contract:release    records openapi.yaml as released (contract/releases/<version>.yaml)
// `--root DIR` runs on another project folder (the tests use copies). Exits 1 on a problem.
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { projectRoot } from '../src/paths.js'
import { CHANGELOG_FILE, RELEASES_DIR, contractState, gateProblems } from './lib/contract-project.js'
import { CHANGELOG_COMMAND } from './lib/contract-changelog.js'

const args = process.argv.slice(2)
const command = args[0]
const rootFlag = args.indexOf('--root')
const root = rootFlag >= 0 ? resolve(args[rootFlag + 1] ?? '.') : projectRoot
const out = (line: string) => { process.stdout.write(`${line}\n`) }

const state = contractState(root)

if (command === 'changelog') {
  writeFileSync(join(root, CHANGELOG_FILE), state.changelog)
  out(`wrote ${CHANGELOG_FILE}: ${state.current} against release ${state.released}, ${state.changes.length} changes`)
} else if (command === 'check') {
  const problems = gateProblems(root, state)
  const breaking = state.changes.filter(c => c.kind === 'breaking')
  out(`contract:check: openapi.yaml ${state.current} against the released ${state.released}: ` +
    `${state.changes.length} changes, ${breaking.length} breaking`)
  if (problems.length > 0) {
    for (const p of problems) out(`  FAIL ${p}`)
    if (breaking.length > 0) {
      out('  breaking changes:')
      for (const c of breaking.slice(0, 40)) out(`    ${c.operation}: ${c.text}`)
      if (breaking.length > 40) {
        out(`    … and ${breaking.length - 40} more (${CHANGELOG_FILE} after \`${CHANGELOG_COMMAND}\`)`)
      }
    }
    process.exitCode = 1
  } else {
    out(`  ok: the version fits the changes, the packages carry it, ${CHANGELOG_FILE} is current`)
  }
} else if (command === 'release') {
  const target = join(root, RELEASES_DIR, `${state.current}.yaml`)
  const problems = gateProblems(root, state)
  if (existsSync(target)) {
    out(`${state.current} is already released (${target}): bump info.version first`)
    process.exitCode = 1
  } else if (problems.length > 0) {
    for (const p of problems) out(`  FAIL ${p}`)
    process.exitCode = 1
  } else {
    copyFileSync(join(root, 'openapi.yaml'), target)
    writeFileSync(join(root, CHANGELOG_FILE), contractState(root).changelog)
    out(`released ${state.current}: ${join(RELEASES_DIR, `${state.current}.yaml`)}, ${CHANGELOG_FILE} updated`)
  }
} else {
  out('usage: tsx scripts/contract.ts check|changelog|release [--root DIR]')
  process.exitCode = 2
}
