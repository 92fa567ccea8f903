import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { contractPath, projectRoot } from './paths.js'

// Parsing openapi.yaml (180 kB) with the yaml package takes 0.6–1 s of CPU; the same document as
// JSON parses in a few milliseconds. The parsed contract is kept as JSON under
// node_modules/.cache/ (where build tools keep theirs), named by the SHA-256 of the YAML text, so an
// edited contract is never served from a stale cache: every start and every test process after
// the first reads the JSON. Nothing depends on the cache: when it cannot be read or written (a
// read-only install, a full disk) the YAML is parsed as before.

export const contractCacheDir = join(projectRoot, 'node_modules', '.cache', 'workspace-service')

export interface ParsedContract {
  /** SHA-256 of openapi.yaml's bytes, hex. */
  sha256: string
  doc: Record<string, unknown>
}

let memo: ParsedContract | undefined

/** openapi.yaml parsed: from this process's memo, the JSON cache, or the YAML (then cached). */
export function readContractFile (path = contractPath, cacheDir = contractCacheDir): ParsedContract {
  const bytes = readFileSync(path)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  if (memo?.sha256 !== sha256) memo = parseContract(bytes, sha256, cacheDir)
  return memo
}

function parseContract (bytes: Buffer, sha256: string, cacheDir: string): ParsedContract {
  const file = join(cacheDir, `openapi-${sha256}.json`)
  try {
    return { sha256, doc: JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown> }
  } catch {
    // Not cached yet (or unreadable): parse, then keep it for the next process.
  }
  // Loaded only here: a start that finds the cache never loads the YAML parser.
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml')
  const doc = parse(bytes.toString('utf8')) as Record<string, unknown>
  try {
    mkdirSync(cacheDir, { recursive: true })
    // Written aside and renamed: processes starting in parallel never read half a file.
    const tmp = `${file}.${process.pid}.tmp`
    writeFileSync(tmp, JSON.stringify(doc))
    renameSync(tmp, file)
    // Earlier versions of the contract are not read again.
    for (const name of readdirSync(cacheDir)) {
      if (/^openapi-[0-9a-f]{64}\.json$/.test(name) && join(cacheDir, name) !== file) {
        rmSync(join(cacheDir, name), { force: true })
      }
    }
  } catch {
    // A cache that cannot be written costs the parse next time, nothing else.
  }
  return { sha256, doc }
}
