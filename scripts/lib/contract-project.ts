// The contract's history in a project folder: the released snapshots (contract/releases/*.yaml),
// the current openapi.yaml, the changes between them, and what the gate checks (scripts/contract.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse as parseYaml } from 'yaml'
import { diffContracts, type Change } from './contract-diff.js'
import { compareVersions, parseVersion, versionProblems } from './contract-versions.js'
import { CHANGELOG_COMMAND, renderChangelog, type VersionEntry } from './contract-changelog.js'
import { readDeprecations } from '../../src/plugins/contract-lifecycle.js'

type Json = Record<string, unknown>

export const RELEASES_DIR = join('contract', 'releases')
export const CHANGELOG_FILE = join('docs', 'contract-changelog.md')
/** What a version means for the people upgrading, by hand: contract/notes/<version>.md (optional). */
const NOTES_DIR = join('contract', 'notes')
/** Packages whose version is the contract's: the service itself and the typed client. */
const VERSIONED_PACKAGES = ['package.json', join('clients', 'typescript', 'package.json')]

interface Release { version: string, doc: Json }

export function readContract (file: string): Json {
  return parseYaml(readFileSync(file, 'utf8')) as Json
}

function notesOf (root: string, version: string): { notes?: string } {
  const file = join(root, NOTES_DIR, `${version}.md`)
  return existsSync(file) ? { notes: readFileSync(file, 'utf8') } : {}
}

function versionOf (doc: Json): string {
  return String((doc.info as Json | undefined)?.version ?? '')
}

/** The released snapshots, oldest first; each file is named by the version it holds. */
function releases (root: string): Release[] {
  const dir = join(root, RELEASES_DIR)
  const found = existsSync(dir) ? readdirSync(dir).filter(f => f.endsWith('.yaml')) : []
  return found.map(f => {
    const doc = readContract(join(dir, f))
    const version = f.slice(0, -'.yaml'.length)
    if (versionOf(doc) !== version) {
      throw new Error(`${join(RELEASES_DIR, f)} holds info.version ${versionOf(doc)}, not ${version}`)
    }
    return { version, doc }
  }).sort((a, b) => {
    const [x, y] = [parseVersion(a.version), parseVersion(b.version)]
    return x === undefined || y === undefined ? a.version.localeCompare(b.version) : compareVersions(x, y)
  })
}

export interface ContractState {
  released: string
  current: string
  /** Changes from the last release to openapi.yaml. */
  changes: Change[]
  /** docs/contract-changelog.md as it should be. */
  changelog: string
}

export function contractState (root: string): ContractState {
  const history = releases(root)
  const last = history.at(-1)
  if (last === undefined) throw new Error(`no released contract in ${RELEASES_DIR}/ (the first is the baseline)`)
  const doc = readContract(join(root, 'openapi.yaml'))
  const current = versionOf(doc)
  const changes = diffContracts(last.doc, doc)
  const entries: VersionEntry[] = []
  if (current !== last.version) {
    entries.push({
      version: current,
      previous: last.version,
      released: false,
      changes,
      deprecationDates: deprecationDates(doc),
      allOperations: operationLabels(doc),
      ...notesOf(root, current)
    })
  }
  for (let i = history.length - 1; i >= 0; i--) {
    const release = history[i] as Release
    const before = history[i - 1]
    entries.push(before === undefined
      ? { version: release.version, released: true, changes: [], operations: countOperations(release.doc) }
      : {
          version: release.version,
          previous: before.version,
          released: true,
          changes: diffContracts(before.doc, release.doc),
          deprecationDates: deprecationDates(release.doc),
          allOperations: operationLabels(release.doc),
          ...notesOf(root, release.version)
        })
  }
  return { released: last.version, current, changes, changelog: renderChangelog(entries) }
}

/** What fails the gate, each with what to do; empty when the contract may land. */
export function gateProblems (root: string, state: ContractState): string[] {
  const problems = versionProblems(state.released, state.current, state.changes)
    .map(p => `${p} (info.version in openapi.yaml)`)
  // What the service would refuse at start: a deprecation it cannot date on the wire.
  try {
    readDeprecations(readContract(join(root, 'openapi.yaml')), '')
  } catch (err) {
    problems.push((err as Error).message)
  }
  for (const file of VERSIONED_PACKAGES) {
    const path = join(root, file)
    if (!existsSync(path)) continue
    const version = (JSON.parse(readFileSync(path, 'utf8')) as { version?: string }).version
    if (version !== state.current) {
      problems.push(`${file} has version ${String(version)}, the contract ${state.current}: set it to ${state.current}`)
    }
  }
  const file = join(root, CHANGELOG_FILE)
  const written = existsSync(file) ? readFileSync(file, 'utf8') : ''
  if (written !== state.changelog) {
    problems.push(
      `${CHANGELOG_FILE} does not list the contract's changes as they are: ` +
      `run \`${CHANGELOG_COMMAND}\` and commit ${CHANGELOG_FILE}`
    )
  }
  return problems
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

/** "GET /api/users" for each operation of the contract (webhooks are not operations here). */
function operationLabels (doc: Json): string[] {
  return Object.entries((doc.paths ?? {}) as Record<string, Json>)
    .flatMap(([path, item]) => Object.keys(item).filter(k => METHODS.has(k)).map(m => `${m.toUpperCase()} ${path}`))
}

function countOperations (doc: Json): number {
  return operationLabels(doc).length
}

function deprecationDates (doc: Json): Map<string, string> {
  const dates = new Map<string, string>()
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const [method, op] of Object.entries(item)) {
      if (op.deprecated !== true) continue
      const parts = [
        typeof op['x-deprecated-at'] === 'string' ? `since ${op['x-deprecated-at']}` : '',
        typeof op['x-sunset'] === 'string' ? `sunset ${op['x-sunset']}` : ''
      ].filter(s => s !== '')
      if (parts.length > 0) dates.set(`${method.toUpperCase()} ${path}`, parts.join(', '))
    }
  }
  return dates
}
