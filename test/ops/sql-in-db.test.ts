import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { projectRoot } from '../../src/paths.js'

// SQL only in src/db/ (docs/architecture.md, step 5 of adding an operation): a feature, a door or
// a plugin calls a repository function; it never writes a statement or sends one. A static check
// over every module of src/ and handlers/ outside src/db/ and src/generated/: a string or template
// that reads as SQL (a statement, a clause only SQL has) or a call of `.query(` / `.exec(` on the
// database fails the test. Comments may speak of SQL; code may not.

/** Modules outside src/db/ that still send SQL, and why. Each must still do so (no stale entries). */
const ALLOWED: Record<string, string> = {
  // pg-boss's own statements reach the Database port through this executor; and the NOTIFY a job
  // due now sends (pg_notify) is part of queueing it in the caller's transaction.
  'src/jobs/engine.ts': 'the job engine adapter runs pg-boss\'s SQL on the Database port',
  // ANALYZE and VACUUM of the embedded database (what autovacuum does on PostgreSQL).
  'src/housekeeping/statistics.ts': 'maintenance statements of the retention sweep',
  // Translates the SCIM filter grammar into a WHERE clause; the column SQL it compares is the
  // repositories' (USER_FILTER_COLUMNS, GROUP_FILTER_COLUMNS in src/db/).
  'src/scim/filter.ts': 'the SCIM filter → WHERE clause translator'
}

/** Text that only SQL writes: a statement, or a clause of one. Keywords in upper case, as our SQL is. */
const SQL = new RegExp([
  String.raw`\bSELECT\s+(\S+\s+)*?FROM\b`, String.raw`\bSELECT\s+(1|pg_\w+|count\()`, String.raw`\bINSERT\s+INTO\b`,
  String.raw`\bUPDATE\s+\w+\s+SET\b`, String.raw`\bDELETE\s+FROM\b`, String.raw`\bEXISTS\s*\(`,
  String.raw`\bFOR\s+(UPDATE|SHARE)\b`, String.raw`\bIS\s+(NOT\s+)?(NULL|DISTINCT\s+FROM)\b`, String.raw`\s(I?LIKE)\s`,
  String.raw`^\s*(ANALYZE|VACUUM)\b`, String.raw`\bON\s+CONFLICT\b`, String.raw`\bRETURNING\b`
].join('|'))

/** A receiver that is the database or a transaction (`q`, `tx`, `db`, `deps.db`, `opts.db`). */
const DATABASE = /^(q|tx|db|client|\w+(\.\w+)*\.db)$/

/** The TypeScript modules of a folder, by path from the project's root. */
const modulesOf = (folder: string): string[] =>
  readdirSync(join(projectRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter(f => f.endsWith('.ts') && !f.endsWith('.d.ts')).map(f => join(folder, f))

/** What a node does with SQL: writes it (a string or template that reads as SQL) or sends it. */
function sqlOf (node: ts.Node, file: ts.SourceFile): string | undefined {
  if ((ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) && SQL.test(node.text)) {
    return `SQL text ${JSON.stringify(node.text.trim().slice(0, 60))}`
  }
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return undefined
  const method = node.expression.name.text
  const receiver = node.expression.expression.getText(file)
  return method === 'query' || (method === 'exec' && DATABASE.test(receiver)) ? `${receiver}.${method}(…)` : undefined
}

/** Every place one source text writes or sends SQL: `file:line: what`. */
function sqlIn (fileName: string, text: string): string[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const nodes: ts.Node[] = []
  const walk = (node: ts.Node): void => { nodes.push(node); ts.forEachChild(node, walk) }
  walk(file)
  return nodes.flatMap(node => {
    const what = sqlOf(node, file)
    return what === undefined ? [] : [`${fileName}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${what}`]
  })
}

t.test('the check sees SQL text and statements sent, and lets words and regular expressions be', async t => {
  /* eslint-disable no-template-curly-in-string -- the probes are source text */
  const probes: Array<[code: string, isSql: boolean]> = [
    ['const r = await q.query(\'SELECT 1\')', true],
    ['await tx.exec(script)', true],
    ['await deps.db.query(text, [])', true],
    ['const s = `SELECT id, name FROM users WHERE id = $1`', true],
    ['const w = "workspace_id = $1 AND directory_external_id IS NOT NULL"', true],
    ['const e = (p: string) => `EXISTS (SELECT 1 FROM m WHERE m.id = ${p})`', true],
    ['const u = \'UPDATE users SET name = $2 WHERE id = $1\'', true],
    ['const l = `${column} LIKE ${param}`', true],
    ['// SELECT … FOR UPDATE SKIP LOCKED, in a comment', false],
    ['const m = /^invite (\\S+)$/.exec(text)', false],
    ['const d = \'Select a member to update their role\'', false],
    ['const n = \'Rows per DELETE statement\'', false],
    ['const h = request.query.limit', false]
  ]
  /* eslint-enable no-template-curly-in-string */
  for (const [code, isSql] of probes) t.equal(sqlIn('probe.ts', code).length > 0, isSql, code)
})

t.test('no module outside src/db/ writes or sends SQL', async t => {
  const files = ['src', 'handlers'].flatMap(modulesOf)
  const inDb = files.filter(f => f.startsWith('src/db/'))
  const outside = files.filter(f => !f.startsWith('src/db/') && !f.startsWith('src/generated/'))
  t.ok(outside.length > 100, `the modules are found (${outside.length})`)

  const found = new Map(outside.map(f => [f, sqlIn(f, readFileSync(join(projectRoot, f), 'utf8'))]))
  // The check reads what the repositories write as SQL, or it would read nothing anywhere.
  const seenInDb = inDb.filter(f => sqlIn(f, readFileSync(join(projectRoot, f), 'utf8')).length > 0)
  t.ok(seenInDb.length > 20, `it sees the repositories' SQL (${seenInDb.length} modules of src/db/)`)

  const unexpected = [...found].filter(([f]) => ALLOWED[f] === undefined).flatMap(([, places]) => places)
  t.same(unexpected, [], 'SQL is in src/db/ only: move the statement into a repository function there')
  for (const [f, why] of Object.entries(ALLOWED)) {
    t.ok((found.get(f) ?? []).length > 0, `${f} (${why}) still sends or writes SQL; else drop it from ALLOWED`)
  }
})
