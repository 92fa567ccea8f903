import { Validator } from '@seriousme/openapi-schema-validator'

// fastify-openapi-glue checks the contract against the OpenAPI meta-schema every time it binds
// routes (lib/Parser.js preProcessSpec), with a `new Validator()` each time, and the Validator
// compiles that meta-schema with a new Ajv per instance: 130 ms of CPU warm, 0.5 s cold, for the
// same compiled function every time. A production start pays it once; every app a test file
// builds paid it again (≈ 10% of a small test file's CPU).
//
// The compiled validator depends only on the meta-schema's version and the Validator's Ajv
// options (glue passes none), and it is used synchronously (its `errors` are read right after the
// call), so one compiled function per version and options serves every instance of the process.
// The memo wraps the Validator's own method: when a later version renames or drops it, nothing
// breaks, each parse compiles again (test/contract/meta-schema-memo.test.ts then says so).

type Compiled = (data: unknown) => boolean
interface WithCompiler { ajvOptions: unknown, getAjvValidator?: (version: string) => Compiled }

const proto = Validator.prototype as unknown as WithCompiler
const compile = proto.getAjvValidator
const memo = new Map<string, Compiled>()

/** How many times the meta-schema was compiled in this process (for the test that holds the memo). */
export let metaSchemaCompilations = 0

if (typeof compile === 'function') {
  proto.getAjvValidator = function (this: WithCompiler, version: string): Compiled {
    const key = `${version} ${JSON.stringify(this.ajvOptions)}`
    let fn = memo.get(key)
    if (fn === undefined) {
      fn = compile.call(this, version)
      metaSchemaCompilations++
      memo.set(key, fn)
    }
    return fn
  }
}
