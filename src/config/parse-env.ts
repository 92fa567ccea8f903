import type { Static, TObject, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { invalid } from './error.js'

// Environment variables → typed values by the schema of src/config.ts: defaults applied,
// strings converted, and the first bad variable named with what it must be.

function describe (schema: TSchema): string {
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.anyOf)) {
    return 'one of ' + (s.anyOf as Array<{ const: unknown }>).map(x => String(x.const)).join(' | ')
  }
  if (s.type === 'integer') return `an integer from ${String(s.minimum)} to ${String(s.maximum)}`
  if (s.type === 'boolean') return 'true or false'
  if (typeof s.pattern === 'string') return `a value matching ${s.pattern}`
  return 'a non-empty string'
}

/** Parse the environment. Throws ConfigError with one line naming the first bad variable. */
export function parseEnv<T extends TObject> (schema: T, raw: Record<string, string | undefined>): Static<T> {
  const picked: Record<string, unknown> = {}
  for (const key of Object.keys(schema.properties)) {
    const v = raw[key]
    if (v !== undefined && v !== '') picked[key] = v
  }
  const converted = Value.Convert(schema, Value.Default(schema, picked))
  const first = Value.Errors(schema, converted).First()
  if (first !== undefined) {
    const name = first.path.replace(/^\//, '')
    const prop = (schema.properties as Record<string, TSchema>)[name]
    const got = raw[name]
    throw invalid(`${name} must be ${prop ? describe(prop) : 'valid'} (got ${JSON.stringify(got)})`)
  }
  return converted as Static<T>
}
