import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { contractPath, projectRoot } from './paths.js'

// openapi.yaml is the source; `npm run build` compiles it (scripts/build-contract.ts) into
// dist/contract.json: the same document parsed, with the SHA-256 of the YAML it came from.
// Parsing the YAML (180 kB) with the yaml package costs 0.6–1 s of CPU at every start; the JSON
// parses in a few milliseconds. Read only: a start finds the compiled contract current and reads
// it, or (the YAML edited since the last build, a checkout never built) parses the YAML. Nothing
// is written at run time, so a read-only install starts the same.

export const compiledContractPath = join(projectRoot, 'dist', 'contract.json')

export interface ParsedContract {
  /** SHA-256 of openapi.yaml's bytes, hex. */
  sha256: string
  doc: Record<string, unknown>
}

let memo: ParsedContract | undefined

/** openapi.yaml parsed: from this process's memo, the compiled contract when current, or the YAML. */
export function readContractFile (path = contractPath, compiled = compiledContractPath): ParsedContract {
  const bytes = readFileSync(path)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  if (memo?.sha256 !== sha256) memo = readCompiled(compiled, sha256) ?? { sha256, doc: parseContractYaml(bytes) }
  return memo
}

/** The compiled contract, when it was compiled from the YAML whose hash is `sha256`. */
export function readCompiled (compiled: string, sha256: string): ParsedContract | undefined {
  try {
    const parsed = JSON.parse(readFileSync(compiled, 'utf8')) as Partial<ParsedContract>
    if (parsed.sha256 === sha256 && typeof parsed.doc === 'object' && parsed.doc !== null) {
      return { sha256, doc: parsed.doc }
    }
  } catch {
    // Not built yet, or unreadable: the YAML is parsed instead.
  }
  return undefined
}

/** The YAML parsed. The parser is loaded only here: a start that finds the compiled contract never loads it. */
export function parseContractYaml (bytes: Buffer): Record<string, unknown> {
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml')
  return parse(bytes.toString('utf8')) as Record<string, unknown>
}
