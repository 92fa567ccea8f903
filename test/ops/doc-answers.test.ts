import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { projectRoot } from '../../src/paths.js'
import { createValidatorCompiler } from '../../src/validation.js'
import { inlineSchema, operations } from '../helpers/contract-examples.js'

// The answers README.md and docs/ show after a curl (`# {"success":true, …}`) are the contract's
// (issue 52, item 5): each names the operation of the curl above it, and is checked against the
// schema of that operation's 2xx answer — every field it shows is one the schema has (the README's
// invite answers once lacked `outcome`, which the contract requires), every required field is
// there unless the line ends in `…}` (fields left out), and every value that is not a placeholder
// (`"…"`, `"wsk_…"`) is valid. A new curl with an answer is checked without a change here.

type Json = Record<string, unknown>
interface Answer { file: string, line: number, method: string, path: string, text: string }

const files = ['README.md', ...readdirSync(join(projectRoot, 'docs')).filter(f => f.endsWith('.md')).map(f => `docs/${f}`)]
const compile = createValidatorCompiler()
const ops = operations()

/** Each `# {…}` line in a fenced sh block, with the method and path of the curl before it. */
function answersIn (file: string): Answer[] {
  const out: Answer[] = []
  let inSh = false
  let curl: { method: string, path: string } | null = null
  let command = ''
  readFileSync(join(projectRoot, file), 'utf8').split('\n').forEach((line, i) => {
    if (/^```(sh|bash|shell)\s*$/.test(line)) { inSh = true; curl = null; return }
    if (/^```/.test(line)) { inSh = false; return }
    if (!inSh) return
    command = command.endsWith('\\') ? `${command.slice(0, -1)} ${line}` : line
    if (!line.trimEnd().endsWith('\\') && /^curl\b/.test(command.trim())) {
      const url = /https?:\/\/[^\s'"]+/.exec(command)?.[0]
      const method = /-X\s+(\w+)/.exec(command)?.[1] ?? (/\s-d\s/.test(command) ? 'POST' : 'GET')
      let path: string | null = null
      try { path = url === undefined ? null : new URL(url).pathname } catch {} // a URL with a shell variable in it
      curl = path === null ? null : { method, path }
    }
    if (/^# \{/.test(line) && curl !== null) out.push({ file, line: i + 1, ...curl, text: line.slice(2) })
  })
  return out
}

const matches = (template: string, path: string): boolean =>
  new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path)

const isPlaceholder = (v: unknown): boolean => typeof v === 'string' && v.includes('…')

t.test('every answer shown after a curl in the README and docs/ is its operation\'s', async t => {
  const answers = files.flatMap(answersIn)
  t.ok(answers.length >= 3, `${answers.length} answers found (${[...new Set(answers.map(a => a.file))].join(', ')})`)
  for (const a of answers) {
    const where = `${a.file}:${a.line} (${a.method} ${a.path})`
    const op = ops.find(o => o.method === a.method && matches(o.path, a.path))
    if (op === undefined) { t.fail(`${where}: no operation of the contract`); continue }
    const [, response] = Object.entries(op.responses).find(([status]) => /^2/.test(status)) ?? []
    const schema = inlineSchema(response?.content?.['application/json']?.schema) as Json | undefined
    if (schema === undefined) { t.fail(`${where}: the operation answers no JSON`); continue }
    const cut = /,\s*…\s*\}\s*$/.test(a.text)
    const body = JSON.parse(a.text.replace(/,\s*…\s*\}\s*$/, '}')) as Json
    const properties = (schema.properties ?? {}) as Record<string, Json>
    t.same(Object.keys(body).filter(k => !(k in properties)), [], `${where}: every field is one the contract has`)
    if (!cut) {
      const required = (schema.required ?? []) as string[]
      t.same(required.filter(k => !(k in body)), [], `${where}: every field the contract requires is shown`)
    }
    for (const [key, value] of Object.entries(body)) {
      const property = properties[key]
      const shown = !isPlaceholder(value) && !(Array.isArray(value) && value.some(isPlaceholder))
      if (property === undefined || !shown) continue
      const validate = compile({ schema: property, httpPart: 'body', method: 'GET', url: '/' }) as
        (v: unknown) => { error?: unknown } | boolean
      const result = validate(value)
      const ok = typeof result === 'boolean' ? result : result.error === undefined
      t.ok(ok, `${where}: ${key} = ${JSON.stringify(value)} is valid`)
    }
  }
})
