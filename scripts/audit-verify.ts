// Checks an audit export offline (docs/audit.md, "Proof: how to verify"):
//   npm run audit:verify -- export.ndjson [--digests digests.json --keys keys.json]
// Prints a line per finding — a changed, removed, reordered or forked record, named by id and
// sequence, or a digest that does not hold — then where each workspace's chain starts; exits 1 on
// any finding, 2 when a file cannot be read. Needs no database, no configuration and no network:
// the digests and keys are the saved answers of GET /api/audit-events/digests and
// GET /api/audit-events/signing-keys.
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { verifyExportFile } from '../src/audit/verify.js'
import { verifyDigests } from '../src/audit/verify-digests.js'

const usage = 'usage: npm run audit:verify -- <export.ndjson> [--digests <digests.json> --keys <keys.json>]'
let args: ReturnType<typeof parseOptions>
function parseOptions () {
  return parseArgs({ allowPositionals: true, options: { digests: { type: 'string' }, keys: { type: 'string' } } })
}
try {
  args = parseOptions()
} catch (err) {
  console.error(`${(err as Error).message}\n${usage}`)
  process.exit(2)
}
const [path] = args.positionals
const { digests, keys } = args.values
if (path === undefined || args.positionals.length > 1 || (digests === undefined) !== (keys === undefined)) {
  console.error(usage)
  process.exit(2)
}
async function items<T> (file: string): Promise<T[]> {
  return (JSON.parse(await readFile(file, 'utf8')) as { items: T[] }).items
}
try {
  const report = await verifyExportFile(path)
  if (digests !== undefined && keys !== undefined) {
    report.findings.push(...verifyDigests(report, await items(digests), await items(keys)))
  }
  for (const f of report.findings) console.log(`${f.kind.toUpperCase()}: ${f.message}`)
  for (const note of report.notes) console.log(note)
  const chained = report.records - report.unchained
  console.log(`${report.records} records: ${chained} in the chain, ${report.unchained} older than the chain; ` +
    `${report.findings.length} finding(s)`)
  process.exit(report.findings.length > 0 ? 1 : 0)
} catch (err) {
  console.error(`audit:verify could not read its files: ${(err as Error).message}`)
  process.exit(2)
}
