import t from 'tap'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { createHash, randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { readContractFile } from '../../src/contract-file.js'
import { contractPath, projectRoot } from '../../src/paths.js'
import { tsImport } from '../helpers/service-process.js'

// The contract `npm run build` compiles (scripts/build-contract.ts: dist/contract.json, the parsed
// document with the SHA-256 of its YAML) and every start reads (src/contract-file.ts): what it
// returns is what parsing the YAML returns, an edit since the build is never answered from the
// compiled file, and nothing is written at run time.
// Then the tests' own device (test/helpers/meta-schema-memo.ts): the meta-schema check once per text.

const dir = mkdtempSync(join(tmpdir(), 'contract-file-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
const yamlFile = join(dir, 'openapi.yaml')
const compiled = join(dir, 'contract.json')
const sha = (text: string): string => createHash('sha256').update(text).digest('hex')

t.test("the project's contract: the same document as the YAML parser's", async t => {
  t.same(readContractFile().doc, parse(readFileSync(contractPath, 'utf8')))
})

t.test('the compiled contract is read while current; an edit since is parsed from the YAML; nothing is written', async t => {
  const a = 'openapi: 3.1.0\ninfo: { title: A, version: "1" }\npaths: {}\n'
  writeFileSync(yamlFile, a)
  t.same(readContractFile(yamlFile, compiled).doc, { openapi: '3.1.0', info: { title: 'A', version: '1' }, paths: {} },
    'not built: the YAML is parsed')
  t.same(readdirSync(dir), ['openapi.yaml'], 'and nothing is written beside it')
  // What the build wrote (marked to tell it apart from a parse).
  writeFileSync(compiled, JSON.stringify({ sha256: sha(a), doc: { openapi: '3.1.0', fromBuild: true } }))
  const b = 'openapi: 3.1.0\ninfo: { title: B, version: "2" }\npaths: {}\n'
  writeFileSync(yamlFile, b)
  t.same(readContractFile(yamlFile, compiled).doc, { openapi: '3.1.0', info: { title: 'B', version: '2' }, paths: {} },
    'edited since the build: the YAML is parsed')
  writeFileSync(yamlFile, a)
  t.same(readContractFile(yamlFile, compiled).doc, { openapi: '3.1.0', fromBuild: true }, 'as built: the compiled file is read')
  writeFileSync(compiled, '{"sha256": "')
  writeFileSync(yamlFile, b)
  readContractFile(yamlFile, compiled) // another version in between, so A is not this process's memo
  writeFileSync(yamlFile, a)
  t.same(readContractFile(yamlFile, compiled).doc, { openapi: '3.1.0', info: { title: 'A', version: '1' }, paths: {} },
    'a damaged compiled file: the YAML is parsed')
  t.equal(readFileSync(compiled, 'utf8'), '{"sha256": "', 'and the file is left as it is')
})

t.test('the meta-schema check: once per contract text, also across processes; an invalid contract is refused every time', async t => {
  const { Validator } = await import('@seriousme/openapi-schema-validator')
  const memo = await import('../helpers/meta-schema-memo.js')
  // A text no earlier run has checked: the project's contract with a description of this run's own.
  const project = readContractFile().doc
  const doc = { ...structuredClone(project), info: { ...(project.info as object), description: `contract-file test ${randomUUID()}` } }
  const checks = memo.metaSchemaChecks
  const compilations = memo.metaSchemaCompilations
  for (let i = 0; i < 3; i++) {
    // What fastify-openapi-glue does at every bind: a new Validator, a copy of the contract.
    const result = await new Validator().validate(structuredClone(doc))
    t.equal(result.valid, true, `bind ${i + 1}: the contract is valid`)
  }
  t.equal(memo.metaSchemaChecks - checks, 1, 'checked once for three binds')
  t.ok(memo.metaSchemaCompilations - compilations <= 1, 'compiled at most once')
  t.ok(memo.metaSchemaCompilations >= 1, "the memo wraps the Validator's compiler (a new version renamed it?)")

  // Another process (another test file, the service started again) validates the same text: the
  // marker left by the first check answers; it compiles nothing. An altered text it does check.
  const file = join(dir, 'checked.json')
  const child = async (d: unknown): Promise<{ valid: boolean, checks: number, compilations: number }> => {
    writeFileSync(file, JSON.stringify(d))
    const script = `
      const { Validator } = await import('@seriousme/openapi-schema-validator')
      const memo = await import(${JSON.stringify(pathToFileURL(join(projectRoot, 'test/helpers/meta-schema-memo.ts')).href)})
      const doc = JSON.parse((await import('node:fs')).readFileSync(${JSON.stringify(file)}, 'utf8'))
      const r = await new Validator().validate(doc)
      console.log(JSON.stringify({ valid: r.valid, checks: memo.metaSchemaChecks, compilations: memo.metaSchemaCompilations }))`
    const { stdout } = await promisify(execFile)(process.execPath, [...tsImport, '--input-type=module', '-e', script], { cwd: projectRoot })
    return JSON.parse(stdout) as { valid: boolean, checks: number, compilations: number }
  }
  t.same(await child(doc), { valid: true, checks: 0, compilations: 0 }, 'another process: the same text is not checked or compiled')
  const edited = { ...doc, info: { ...doc.info, description: `${doc.info.description}, edited` } }
  t.same(await child(edited), { valid: true, checks: 1, compilations: 1 }, 'another process: an edited text is checked')

  const broken = { ...structuredClone(doc), paths: { '/x': { get: { responses: 'none' } } } }
  for (let i = 0; i < 2; i++) {
    const before = memo.metaSchemaChecks
    const result = await new Validator().validate(structuredClone(broken))
    t.equal(result.valid, false, `an invalid contract is refused (${i + 1})`)
    t.ok(Array.isArray(result.errors) && result.errors.length > 0, 'with the validator errors')
    t.equal(memo.metaSchemaChecks - before, 1, 'checked each time: only a valid text is remembered')
  }
})
