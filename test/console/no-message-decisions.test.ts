import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'

// The console shows an answer's `message` to people and decides nothing from it: what happened
// is in the answer's fields (`outcome`, `result`, `code`, `duplicateOf`, …), whose values the
// contract promises, while a message's words may change in any release. A static check over every
// console source: a `.message` (or `['message']`) that reaches a condition, a comparison, a
// switch, a negation, a logical test or a text search (RegExp#test, includes, startsWith, …) fails
// the test. Showing it — in a template, as a fallback (`??`), trimmed or re-punctuated — is fine,
// and so is asking whether there is one (`typeof x.message === 'string'`).

const ROOT = new URL('../../console/', import.meta.url).pathname

/** String and RegExp methods that search text: calling one on a message, or with it, decides from its words. */
const SEARCHES = new Set([
  'test', 'exec', 'includes', 'startsWith', 'endsWith', 'match', 'matchAll', 'search', 'indexOf',
  'lastIndexOf', 'localeCompare'
])
/** Methods that only reshape the text: the result is still the message. */
const RESHAPES = new Set(['trim', 'trimStart', 'trimEnd', 'toLowerCase', 'toUpperCase', 'normalize', 'replace', 'replaceAll', 'slice', 'substring'])
const COMPARISONS = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsToken,
  ts.SyntaxKind.LessThanToken, ts.SyntaxKind.GreaterThanToken,
  ts.SyntaxKind.LessThanEqualsToken, ts.SyntaxKind.GreaterThanEqualsToken,
  ts.SyntaxKind.InKeyword, ts.SyntaxKind.InstanceOfKeyword
])

function sources (dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap(e => {
    const path = join(dir, e.name)
    if (e.isDirectory()) return sources(path)
    return /\.(ts|tsx)$/.test(e.name) ? [path] : []
  })
}

const isMessage = (node: ts.Node): boolean =>
  (ts.isPropertyAccessExpression(node) && node.name.text === 'message') ||
  (ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression) &&
    node.argumentExpression.text === 'message')

/** Why this use of a message decides something; undefined when it only shows it. */
function decision (use: ts.Expression): string | undefined {
  let node: ts.Node = use
  for (;;) {
    const parent = node.parent
    // Wrappers that keep the value what it was.
    if (ts.isParenthesizedExpression(parent) || ts.isAsExpression(parent) || ts.isNonNullExpression(parent) ||
        ts.isSatisfiesExpression(parent) || ts.isTypeAssertionExpression(parent)) { node = parent; continue }
    if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
      const call = parent.parent
      const method = parent.name.text
      if (ts.isCallExpression(call) && call.expression === parent) {
        if (SEARCHES.has(method)) return `.${method}() on it`
        if (RESHAPES.has(method)) { node = call; continue }
      }
      if (method === 'length') return 'its length'
      return undefined
    }
    if (ts.isCallExpression(parent) && parent.arguments.includes(node as ts.Expression) &&
        ts.isPropertyAccessExpression(parent.expression) && SEARCHES.has(parent.expression.name.text)) {
      return `passed to .${parent.expression.name.text}()`
    }
    if (ts.isTypeOfExpression(parent)) return undefined
    if (ts.isBinaryExpression(parent)) {
      const op = parent.operatorToken.kind
      if (COMPARISONS.has(op)) return 'compared'
      // `a.message && …`, `a.message || …`: its presence or its words choose the branch. `??` is a fallback.
      if ((op === ts.SyntaxKind.AmpersandAmpersandToken || op === ts.SyntaxKind.BarBarToken) && parent.left === node) return 'tested by a logical operator'
      return undefined
    }
    if (ts.isPrefixUnaryExpression(parent) && parent.operator === ts.SyntaxKind.ExclamationToken) return 'negated'
    if (ts.isConditionalExpression(parent) && parent.condition === node) return 'the condition of ?:'
    if ((ts.isIfStatement(parent) || ts.isWhileStatement(parent) || ts.isDoStatement(parent)) && parent.expression === node) return 'a statement\'s condition'
    if (ts.isForStatement(parent) && parent.condition === node) return 'a loop\'s condition'
    if (ts.isSwitchStatement(parent) && parent.expression === node) return 'switched on'
    if (ts.isCaseClause(parent) && parent.expression === node) return 'a case'
    return undefined
  }
}

/** Every decision taken from a message in one source text: `line: code (why)`. */
function decisionsIn (fileName: string, text: string): string[] {
  const kind = fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, kind)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if (isMessage(node)) {
      const why = decision(node as ts.Expression)
      if (why !== undefined) {
        const line = file.getLineAndCharacterOfPosition(node.getStart()).line + 1
        found.push(`${fileName}:${line}: ${node.getText()} (${why})`)
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(file)
  return found
}

t.test('the check sees a decision taken from a message, and lets a shown one be', async t => {
  const decides = [
    'if (/re-?sent/i.test(r.data.message)) x()',
    'const again = r.data.message.includes(\'re-sent\')',
    'const y = r.message === \'Invitation re-sent\' ? 1 : 2',
    'switch (body[\'message\']) { case \'a\': break }',
    'if (!r.message) x()',
    'const z = r.message.toLowerCase().startsWith(\'invitation re\')',
    'const w = (r.message as string).match(/row (\\d+)/)'
  ]
  for (const code of decides) t.equal(decisionsIn('probe.ts', code).length, 1, code)
  const shows = [
    // eslint-disable-next-line no-template-curly-in-string -- the probe is source text
    'const text = `listed twice: ${r.message ?? \'\'}`',
    'const m = typeof body.message === \'string\' ? body.message.replace(/\\.?$/, \'.\') : undefined',
    'const e = { text: r.message }',
    'const d = r.code === \'USER_EXISTS\''
  ]
  for (const code of shows) t.same(decisionsIn('probe.ts', code), [], code)
})

t.test('no console source decides anything from an answer\'s message', async t => {
  const files = sources(ROOT)
  t.ok(files.length > 5, 'the console\'s sources are found')
  const found = files.flatMap(f => decisionsIn(relative(ROOT, f), readFileSync(f, 'utf8')))
  t.same(found, [], 'decisions read from fields (outcome, result, code, duplicateOf), never from message')
})
