import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'

// fastify-openapi-glue hands Fastify the contract's schemas; these compilers decide how they are
// enforced. Bodies are validated exactly as written: no coercion, no silent removal of unknown
// fields (additionalProperties: false means 400), defaults filled in (role → member).
// Query, path and header values arrive as strings, so those parts may coerce ("10" → 10).

// OpenAPI keywords that are annotations to a JSON-schema validator, allowed by name rather than
// by turning strict mode off (which would also accept misspelled keywords).
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs']

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

function makeAjv (opts: Options): Ajv {
  const ajv = new Ajv({
    useDefaults: true,
    removeAdditional: false,
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    ...opts
  })
  addFormats(ajv)
  for (const k of OPENAPI_KEYWORDS) ajv.addKeyword(k)
  // `x-trim: true` (a contract extension on e-mail fields): surrounding spaces are removed before
  // the other string keywords run, so " Ada@Example.com " is valid and arrives trimmed.
  ajv.addKeyword({
    keyword: 'x-trim',
    type: 'string',
    schemaType: 'boolean',
    modifying: true,
    before: 'maxLength',
    compile: (on: boolean) => (data: string, ctx?: { parentData?: Record<string | number, unknown>, parentDataProperty?: string | number }) => {
      if (on && ctx?.parentData !== undefined && ctx.parentDataProperty !== undefined) ctx.parentData[ctx.parentDataProperty] = data.trim()
      return true
    }
  })
  return ajv
}

export function createValidatorCompiler (): FastifySchemaCompiler<unknown> {
  const body = makeAjv({ coerceTypes: false })
  const other = makeAjv({ coerceTypes: 'array' })
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? body : other
    return ajv.compile(schema as object) as ValidateFunction
  }
}
