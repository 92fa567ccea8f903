import t from 'tap'
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { build } from '../helpers/build.js'
import { chainedRecords } from '../helpers/audit-chain.js'
import { projectRoot } from '../../src/paths.js'
import { signClosedHours } from '../../src/audit/digests.js'

// The must-show of issue 55: one record edited in the database, one deleted, two swapped —
// `npm run audit:verify -- export.ndjson` names each, one line per finding, and exits 1; the
// untouched export of the same trail verifies (exit 0), and so does the export made before the
// tampering. The export is the service's own (GET /api/audit-events/export). PGlite, or
// PostgreSQL with TEST_DATABASE_URL.

const h = await build(t)
const admin = await h.signIn({ role: 'admin' })
const dir = await mkdtemp(join(tmpdir(), 'audit-verify-'))
t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })

const record = chainedRecords(h, admin.workspaceId, 'verify test')
const ids: string[] = []
for (let i = 1; i <= 12; i++) ids.push(await record(i))

async function exported (name: string): Promise<string> {
  const res = await h.inject({ url: '/api/audit-events/export', headers: { cookie: admin.cookie } })
  if (res.statusCode !== 200) throw new Error(`export answered ${res.statusCode}`)
  const path = join(dir, name)
  await writeFile(path, res.body)
  return path
}

/**
 * `npm run audit:verify -- <path>`: its exit code and what it printed. The script runs under tsx,
 * which compiles src/ to other JavaScript than this test's loader: its coverage is off, or c8
 * merges the two compilations' ranges (test/helpers/coverage-compilations.mjs).
 */
async function verify (path: string, ...options: string[]): Promise<{ code: number, lines: string[] }> {
  const env = { ...process.env, _TAPJS_PROCESSINFO_COVERAGE_: '0' }
  return await new Promise(resolve => {
    execFile('npm', ['run', '--silent', 'audit:verify', '--', path, ...options], { cwd: projectRoot, env }, (err, stdout) => {
      resolve({ code: err === null ? 0 : (err as { code?: number }).code ?? -1, lines: stdout.trim().split('\n') })
    })
  })
}

const before = await exported('before.ndjson')

t.test('the trail as exported verifies', async t => {
  const { code, lines } = await verify(before)
  t.equal(code, 0, 'no finding')
  t.match(lines.at(-1), /^\d+ records: 12 in the chain, \d+ older than the chain; 0 finding\(s\)$/)
})

t.test('with the signed digests and the public keys as the API gives them', async t => {
  h.clock.advance(3_600_000)
  t.equal(await signClosedHours({ db: h.db, config: h.config, clock: h.clock, log: h.app.log }), 1)
  const files: string[] = []
  for (const what of ['digests', 'signing-keys']) {
    const res = await h.inject({ url: `/api/audit-events/${what}`, headers: { cookie: admin.cookie } })
    files.push(join(dir, `${what}.json`))
    await writeFile(files.at(-1) as string, res.body)
  }
  const { code, lines } = await verify(before, '--digests', files[0] as string, '--keys', files[1] as string)
  t.equal(code, 0, 'the export and its digest agree')
  t.match(lines.at(-1), /0 finding\(s\)$/)
  const half = await verify(before, '--digests', files[0] as string)
  t.equal(half.code, 2, 'digests without keys: a usage error')
})

t.test('an edited, a deleted and two swapped records are each named', async t => {
  const edited = ids[2] as string
  const deleted = ids[5] as string
  const [swapA, swapB] = [ids[8] as string, ids[10] as string]
  await h.db.query('UPDATE audit_events SET payload = \'{"email":"mallory@example.com","role":"admin"}\' WHERE id = $1', [edited])
  await h.db.query('DELETE FROM audit_events WHERE id = $1', [deleted])
  // The two records trade places in the chain (each keeps its own hashes), by way of a free place.
  const seq = async (id: string): Promise<number> => (await h.db.query<{ s: number }>(
    'SELECT chain_seq::float8 AS s FROM audit_events WHERE id = $1', [id])).rows[0]?.s as number
  const [seqA, seqB] = [await seq(swapA), await seq(swapB)]
  await h.db.query('UPDATE audit_events SET chain_seq = -1 WHERE id = $1', [swapA])
  await h.db.query('UPDATE audit_events SET chain_seq = $2 WHERE id = $1', [swapB, seqA])
  await h.db.query('UPDATE audit_events SET chain_seq = $2 WHERE id = $1', [swapA, seqB])
  const { code, lines } = await verify(await exported('after.ndjson'))
  t.equal(code, 1, 'a finding exits non-zero')
  const findings = lines.filter(l => /^[A-Z]+: /.test(l))
  t.equal(findings.length, 4, findings.join('\n'))
  t.match(findings.find(l => l.includes(edited)), /^CHANGED: record \S+ \(sequence 3\), line \d+: changed — its content does not match its hash/)
  t.match(findings.find(l => l.startsWith('REMOVED')), new RegExp(`^REMOVED: record ${ids[6] as string} \\(sequence 7\\): 1 record\\(s\\) removed before it \\(sequence 6\\)`))
  t.match(findings.find(l => l.includes(swapA)), /^REORDERED: record \S+ \(sequence 11\): reordered — its chain puts it at sequence 9$/)
  t.match(findings.find(l => l.includes(swapB)), /^REORDERED: record \S+ \(sequence 9\): reordered — its chain puts it at sequence 11$/)
  t.match(lines.at(-1), /4 finding\(s\)$/)

  const earlier = await verify(before)
  t.equal(earlier.code, 0, 'the export made before still verifies: the file holds its own proof')
})

t.test('a file that is not there is a usage error, not a verdict', async t => {
  const { code } = await verify(join(dir, 'missing.ndjson'))
  t.equal(code, 2)
})

// A forged file may chain a record after itself (its previous hash its own hash, or two records
// with one hash): the walk once went round that loop for ever, never printing a verdict.
t.test('a record chained after itself is named, and the verdict comes', async t => {
  const lines = (await readFile(before, 'utf8')).trim().split('\n').map(l => JSON.parse(l) as Record<string, unknown>)
  const chained = lines.filter(l => typeof l.hash === 'string')
  const [a, b] = chained as [Record<string, unknown>, Record<string, unknown>]
  const looped = join(dir, 'looped.ndjson')
  await writeFile(looped, [a, { ...b, previousHash: a.hash, hash: a.hash }].map(l => JSON.stringify(l)).join('\n') + '\n')
  const { code, lines: out } = await verify(looped)
  t.equal(code, 1, 'findings')
  t.ok(out.some(l => /loops back to/.test(l)), `the loop is named: ${out.join(' | ')}`)
})
