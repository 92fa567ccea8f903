import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import fastJsonStringify from 'fast-json-stringify'

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

// Compiled validators and serializers are pure functions of their schema: they are cached for
// the process by the schema's text, so the many identical schemas of the contract (every
// ErrorResponse, every Invitation) compile once, and a second app instance compiles nothing.
const validators = new Map<string, ValidateFunction>()
const serializers = new Map<string, (data: unknown) => string>()
let ajvs: { body: Ajv, other: Ajv } | undefined

export function createValidatorCompiler (): FastifySchemaCompiler<unknown> {
  ajvs ??= { body: makeAjv({ coerceTypes: false }), other: makeAjv({ coerceTypes: 'array' }) }
  const { body, other } = ajvs
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'other'
    const key = part + JSON.stringify(schema)
    let fn = validators.get(key)
    if (fn === undefined) {
      fn = (part === 'body' ? body : other).compile(schema as object)
      validators.set(key, fn)
    }
    return fn
  }
}

export function createSerializerCompiler () {
  return ({ schema }: { schema: unknown }) => {
    const key = JSON.stringify(schema)
    let fn = serializers.get(key)
    if (fn === undefined) {
      fn = fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as (data: unknown) => string
      serializers.set(key, fn)
    }
    return fn
  }
}
