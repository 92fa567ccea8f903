import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { projectRoot } from '../../src/paths.js'

// Tests only: preloaded into every test process, and every service or script a test starts, by
// test/helpers/ts-loader.mjs. The service itself does not patch a library (issue 44).
//
// fastify-openapi-glue checks the contract against the OpenAPI meta-schema every time it binds
// routes (lib/Parser.js preProcessSpec), with a `new Validator()` each time, and the Validator
// compiles that meta-schema with a new Ajv per instance: 130 ms of CPU warm, 0.5 s cold, for the
// same compiled function every time. Checking the contract with it costs another 0.2–0.4 s. A
// production start pays both once; every app a test file builds paid them again, and every
// process (each test file, each service a test starts) paid them for the same document.
//
// So, around the Validator's own method (when a later version renames or drops it, nothing
// breaks: each parse compiles and checks again, and test/ops/contract-file.test.ts says so):
// - one compiled function per meta-schema version and Ajv options (glue passes none), compiled
//   only when a document needs checking;
// - a document found valid is remembered by the SHA-256 of its JSON text, the meta-schema version,
//   the options and the validator's version: in this process, and for the next one as an empty
//   marker file in node_modules/.cache/workspace-service-tests/ (beside the test loader's compiled
//   files). An edited contract, or a test's altered copy, is another text: compiled and checked.
//   A document found invalid is never remembered: it is checked again, with its errors, every time.
// The compiled function is used synchronously (its `errors` are read right after the call).

type Compiled = ((data: unknown) => boolean) & { errors?: unknown }
interface WithCompiler { ajvOptions: unknown, getAjvValidator?: (version: string) => Compiled }

const proto = Validator.prototype as unknown as WithCompiler
const compile = proto.getAjvValidator
const compiledFor = new Map<string, Compiled>()
const knownValid = new Set<string>()
const markerDir = join(projectRoot, 'node_modules', '.cache', 'workspace-service-tests', 'valid-contracts')
const validatorPackage = '@seriousme/openapi-schema-validator/package.json'
const packageVersion = (createRequire(import.meta.url)(validatorPackage) as { version: string }).version

/** How many times the meta-schema was compiled in this process. */
export let metaSchemaCompilations = 0
/** How many documents were checked against it in this process (not answered from the memo). */
export let metaSchemaChecks = 0

function remembered (key: string): boolean {
  if (knownValid.has(key)) return true
  if (!existsSync(join(markerDir, key))) return false
  knownValid.add(key)
  return true
}

function remember (key: string): void {
  knownValid.add(key)
  try {
    mkdirSync(markerDir, { recursive: true })
    // Markers of earlier contracts (and of tests' altered copies) are dropped now and then.
    const markers = readdirSync(markerDir)
    if (markers.length > 200) for (const m of markers) rmSync(join(markerDir, m), { force: true })
    writeFileSync(join(markerDir, key), '')
  } catch {
    // Not written: the next process checks the document again, nothing else.
  }
}

if (typeof compile === 'function') {
  proto.getAjvValidator = function (this: WithCompiler, version: string): Compiled {
    const options = `${version} ${JSON.stringify(this.ajvOptions)}`
    const compiled = (): Compiled => {
      let fn = compiledFor.get(options)
      if (fn === undefined) {
        fn = compile.call(this, version)
        metaSchemaCompilations++
        compiledFor.set(options, fn)
      }
      return fn
    }
    let errors: unknown = null
    const check = (data: unknown): boolean => {
      const key = createHash('sha256')
        .update(`${packageVersion} ${options}\n`).update(JSON.stringify(data)).digest('hex')
      if (remembered(key)) {
        errors = null
        return true
      }
      const fn = compiled()
      metaSchemaChecks++
      const valid = fn(data)
      errors = fn.errors
      if (valid) remember(key)
      return valid
    }
    return Object.defineProperty(check, 'errors', { get: () => errors }) as Compiled
  }
}
