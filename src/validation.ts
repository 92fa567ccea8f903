import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { FastifySchemaCompiler } from 'fastify'
import fastJsonStringify from 'fast-json-stringify'

// fastify-openapi-glue hands Fastify the contract's schemas; these compilers decide how they are
// enforced. What a standard validator reading openapi.yaml accepts is exactly what is accepted:
// bodies are validated as written — no coercion, no silent removal of unknown fields
// (additionalProperties: false means 400), no defaults filled in (a `default` documents what a
// client should send; a required field that is missing is 400 whatever its default), and no
// vendor keyword changes validity. Query, path and header values arrive as strings, so those parts
// may coerce ("10" → 10) and take a parameter's documented default (limit → 50).

// OpenAPI keywords that are annotations to a JSON-schema validator, allowed by name rather than
// by turning strict mode off (which would also accept misspelled keywords).
const OPENAPI_KEYWORDS = ['example', 'discriminator', 'xml', 'externalDocs']

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

function makeAjv (opts: Options): Ajv {
  const ajv = new Ajv({
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
  return ajv
}

// Compiled validators and serializers are pure functions of their schema: they are cached for
// the process by the schema's text, so the many identical schemas of the contract (every
// ErrorResponse, every Invitation) compile once, and a second app instance compiles nothing.
const validators = new Map<string, ValidateFunction>()
const serializers = new Map<string, (data: unknown) => string>()
let ajvs: { body: Ajv, other: Ajv } | undefined

export function createValidatorCompiler (): FastifySchemaCompiler<unknown> {
  ajvs ??= {
    body: makeAjv({ coerceTypes: false, useDefaults: false }),
    other: makeAjv({ coerceTypes: 'array', useDefaults: true })
  }
  const { body, other } = ajvs
  return ({ schema, httpPart }) => {
    const part = httpPart === 'body' ? 'body' : 'other'
    // Node gives header names in lower case; Fastify lower-cases the header schema's names only
    // for its own compiler, never for a custom one like this, and glue keeps the contract's
    // spelling (Idempotency-Key): without this, no header parameter would ever be checked.
    const compiled = httpPart === 'headers' ? lowerCaseHeaderNames(schema as Record<string, unknown>) : schema
    const key = part + JSON.stringify(compiled)
    let fn = validators.get(key)
    if (fn === undefined) {
      fn = (part === 'body' ? body : other).compile(compiled as object)
      validators.set(key, fn)
    }
    return fn
  }
}

/** The headers schema glue builds (one flat object) with its property and required names lower-cased. */
function lowerCaseHeaderNames (schema: Record<string, unknown>): Record<string, unknown> {
  const out = { ...schema }
  if (schema.properties !== null && typeof schema.properties === 'object') {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k.toLowerCase(), v]))
  }
  if (Array.isArray(schema.required)) out.required = schema.required.map(n => String(n).toLowerCase())
  return out
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
