import { Ajv, type Options, type ValidateFunction } from 'ajv'
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats'
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
// by turning strict mode off (which would also accept misspelled keywords); with them the
// contract's own extensions a schema may carry: a deprecated field's dates and link
// (src/plugins/contract-lifecycle.ts), and the words for each value of an enum (`ApiKeyScope`).
const OPENAPI_KEYWORDS = [
  'example', 'discriminator', 'xml', 'externalDocs', 'x-deprecated-at', 'x-sunset', 'x-deprecation-link',
  'x-enumDescriptions'
]

const addFormats = addFormatsModule as unknown as FormatsPlugin

// Formats mean what the code parses. ajv-formats' expressions are looser than the parsers behind
// them, and each gap was a 500 (test/contract/contract-formats.test.ts): `uri` accepted what `new URL()`
// throws on (a port past 65535, an IPv4-looking host with an octet past 255, `%00` or invalid
// punycode in the host, an empty host), and `uuid` accepted the URN form `urn:uuid:…`, which
// PostgreSQL's uuid type refuses. Both are narrowed to what RFC 3986 / RFC 9562 and the parser
// agree on; the contract says so where the field is declared.
const ajvUri = addFormats.get('uri', 'full') as (s: string) => boolean
const FORMATS = {
  uri: (s: string) => ajvUri(s) && URL.canParse(s),
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
}

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
  for (const [name, format] of Object.entries(FORMATS)) ajv.addFormat(name, format)
  for (const k of OPENAPI_KEYWORDS) ajv.addKeyword(k)
  return ajv
}

// Compiled validators and serializers are pure functions of their schema: they are cached for
// the process by the schema's text, so the many identical schemas of the contract (every
// ErrorResponse, every Invitation) compile once, and a second app instance compiles nothing.
//
// And each is compiled when it is first used, not when Fastify asks for it: Fastify asks for a
// validator of every part and a serializer of every status of every route as the app gets ready
// (0.25 CPU-s of a restart measured, 0.9 s in a loaded test process's profile), and a process
// answers with few of them. The first request of a kind pays its own schema's compilation (milliseconds). The
// contract-wide tests (test/contract/) send every operation every kind of answer, so a schema Ajv
// or fast-json-stringify would refuse fails there as it would have at start.
const validators = new Map<string, ValidateFunction>()
const serializers = new Map<string, (data: unknown) => string>()
let ajvs: { body: Ajv, other: Ajv } | undefined

/** Compilations asked for and not done yet: compileAllSchemas() runs them. */
const pending = new Set<() => unknown>()

/** `compile`, run once, on the first call of `get` (or by compileAllSchemas). */
function once<F> (compile: () => F): () => F {
  let compiled: F | undefined
  const get = (): F => {
    if (compiled === undefined) {
      compiled = compile()
      pending.delete(get)
    }
    return compiled
  }
  pending.add(get)
  return get
}

/** A validator that compiles on its first call, and keeps the compiled one's `errors` as its own. */
function validatorOnFirstUse (compile: () => ValidateFunction): ValidateFunction {
  const validate = once(compile)
  const lazy = ((data: unknown) => {
    const fn = validate()
    const ok = fn(data)
    lazy.errors = fn.errors ?? null
    return ok
  }) as ValidateFunction
  return lazy
}

/** A serializer that compiles on its first call. */
function serializerOnFirstUse (compile: () => (data: unknown) => string): (data: unknown) => string {
  const serialize = once(compile)
  return data => serialize()(data)
}

/**
 * Compiles every validator and serializer asked for so far and not used yet, and answers how many:
 * a test's check that each schema of the contract compiles (test/contract/contract.test.ts).
 */
export function compileAllSchemas (): number {
  const all = [...pending]
  for (const compile of all) compile()
  return all.length
}

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
      fn = validatorOnFirstUse(() => {
        const compiledFn = (part === 'body' ? body : other).compile(compiled as object)
        if (part === 'body') return compiledFn
        return finiteOnly(numbersAsWritten(compiled as Record<string, unknown>, compiledFn))
      })
      validators.set(key, fn)
    }
    return fn
  }
}

/**
 * Ajv's string → number coercion takes "Infinity" and "1e400" as integers and then skips
 * `minimum`/`maximum` for a non-finite number (Ajv 8.17): `?limit=Infinity` reached the SQL as
 * LIMIT Infinity (a 500). A coerced part holding a non-finite number is refused like any other
 * value that is not a number.
 */
function finiteOnly (validate: ValidateFunction): ValidateFunction {
  const wrapped = ((data: unknown) => {
    const ok = validate(data)
    wrapped.errors = validate.errors ?? null
    if (!ok || data === null || typeof data !== 'object') return ok
    const bad = Object.entries(data).find(([, v]) => typeof v === 'number' && !Number.isFinite(v))
    if (bad === undefined) return true
    const error = { keyword: 'type', params: { type: 'number' }, message: 'must be a finite number' }
    wrapped.errors = [{ ...error, instancePath: `/${bad[0]}`, schemaPath: '#/type' }]
    return false
  }) as ValidateFunction
  return wrapped
}

// Ajv coerces a string to a number whenever Number() takes it: " 10 ", "1e1" and "0x0A" all
// became 10. A parameter the contract types as an integer or a number is one as JSON writes it.
const NUMERAL: Record<string, RegExp> = {
  integer: /^-?(?:0|[1-9]\d*)$/,
  number: /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
}

/**
 * `validate`, preceded by a check (before Ajv coerces in place) that each integer or number
 * property of this query, path or header schema that arrives as a string is written as a JSON
 * number; otherwise the failure Ajv reports for a value of the wrong type.
 */
function numbersAsWritten (schema: Record<string, unknown>, validate: ValidateFunction): ValidateFunction {
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>
  const numeric = Object.entries(properties).flatMap(([name, p]) => {
    const re = typeof p.type === 'string' ? NUMERAL[p.type] : undefined
    return re !== undefined ? [{ name, re, type: p.type as string }] : []
  })
  if (numeric.length === 0) return validate
  const strict = ((data: Record<string, unknown> | null | undefined) => {
    for (const { name, re, type } of numeric) {
      const value = data?.[name]
      if (typeof value === 'string' && !re.test(value)) {
        strict.errors = [{
          instancePath: `/${name}`,
          schemaPath: `#/properties/${name}/type`,
          keyword: 'type',
          params: { type },
          message: `must be ${type}`
        }]
        return false
      }
    }
    const ok = validate(data)
    strict.errors = validate.errors ?? null
    return ok
  }) as ValidateFunction
  return strict
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
      fn = serializerOnFirstUse(() =>
        fastJsonStringify(schema as Parameters<typeof fastJsonStringify>[0]) as (data: unknown) => string)
      serializers.set(key, fn)
    }
    return fn
  }
}
