import t from 'tap'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { parse } from 'yaml'
import { readContractFile } from '../../src/contract-cache.js'
import { contractPath, projectRoot } from '../../src/paths.js'
import { tsImport } from '../helpers/service-process.js'

// The parsed contract is cached as JSON named by the YAML's SHA-256 (src/contract-cache.ts):
// what it returns is what parsing the YAML returns, an edit is never answered from the cache,
// and a cache that cannot be read or written changes nothing but the time.

const dir = mkdtempSync(join(tmpdir(), 'contract-cache-'))
t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
const yamlFile = join(dir, 'openapi.yaml')
const cacheDir = join(dir, 'cache')
const cached = (): string[] => readdirSync(cacheDir).filter(n => n.endsWith('.json'))

t.test("the project's contract: the same document as the YAML parser's", async t => {
  t.same(readContractFile().doc, parse(readFileSync(contractPath, 'utf8')))
})

t.test('first read parses and caches; the next process reads the JSON; an edit is a new entry', async t => {
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: A, version: "1" }\npaths: {}\n')
  const first = readContractFile(yamlFile, cacheDir)
  t.same(first.doc, { openapi: '3.1.0', info: { title: 'A', version: '1' }, paths: {} })
  t.same(cached(), [`openapi-${first.sha256}.json`])
  // What another process finds: the cache file, not the YAML (marked to tell them apart).
  writeFileSync(join(cacheDir, `openapi-${first.sha256}.json`), JSON.stringify({ ...first.doc, fromCache: true }))
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: B, version: "2" }\npaths: {}\n')
  const edited = readContractFile(yamlFile, cacheDir)
  t.not(edited.sha256, first.sha256)
  t.same(edited.doc, { openapi: '3.1.0', info: { title: 'B', version: '2' }, paths: {} })
  t.same(cached(), [`openapi-${edited.sha256}.json`], 'the entry of the earlier version is removed')
  writeFileSync(join(cacheDir, `openapi-${edited.sha256}.json`), JSON.stringify({ ...edited.doc, fromCache: true }))
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: A, version: "1" }\npaths: {}\n')
  t.equal(readContractFile(yamlFile, cacheDir).doc.fromCache, undefined, 'back to the first text: parsed again')
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: B, version: "2" }\npaths: {}\n')
  t.equal(readContractFile(yamlFile, cacheDir).doc.fromCache, undefined, 'its entry was replaced')
})

t.test('a damaged cache entry is parsed again and rewritten', async t => {
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: C, version: "3" }\npaths: {}\n')
  const { sha256 } = readContractFile(yamlFile, cacheDir)
  const entry = join(cacheDir, `openapi-${sha256}.json`)
  writeFileSync(entry, '{"openapi": "3.1')
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: D, version: "4" }\npaths: {}\n')
  readContractFile(yamlFile, cacheDir) // another version in between, so C is not this process's memo
  writeFileSync(entry, '{"openapi": "3.1')
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: C, version: "3" }\npaths: {}\n')
  t.same(readContractFile(yamlFile, cacheDir).doc, { openapi: '3.1.0', info: { title: 'C', version: '3' }, paths: {} })
  t.same(JSON.parse(readFileSync(entry, 'utf8')), { openapi: '3.1.0', info: { title: 'C', version: '3' }, paths: {} })
})

t.test('a cache directory that cannot be made: the YAML is parsed, nothing is written', async t => {
  const blocked = join(dir, 'a-file')
  writeFileSync(blocked, '')
  writeFileSync(yamlFile, 'openapi: 3.1.0\ninfo: { title: E, version: "5" }\npaths: {}\n')
  t.same(readContractFile(yamlFile, join(blocked, 'cache')).doc, { openapi: '3.1.0', info: { title: 'E', version: '5' }, paths: {} })
  t.notOk(existsSync(join(blocked, 'cache')))
})

t.test('the meta-schema check: once per contract text, also across processes; an invalid contract is refused every time', async t => {
  const { Validator } = await import('@seriousme/openapi-schema-validator')
  const memo = await import('../../src/lib/meta-schema-memo.js')
  // A text no earlier run has checked: the project's contract with a description of this run's own.
  const project = readContractFile().doc
  const doc = { ...structuredClone(project), info: { ...(project.info as object), description: `contract-cache test ${randomUUID()}` } }
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
      const memo = await import(${JSON.stringify(pathToFileURL(join(projectRoot, 'src/lib/meta-schema-memo.ts')).href)})
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
