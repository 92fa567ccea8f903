import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Errors, type ErrorCode, type ServiceError } from '../../src/errors.js'
import { createValidatorCompiler } from '../../src/validation.js'
import { projectRoot } from '../../src/paths.js'
import { formatSchemaErrors } from '../../src/plugins/errors.js'
import { deref } from '../helpers/contract.js'
import {
  contract, examplesOf, inlineSchema, operations, type Example, type Operation, type Parameter
} from '../helpers/contract-examples.js'

// The contract's examples are what client authors read, what Prism's mock answers and what API
// testing tools send: each one must be valid under its schema (validated by the service's own Ajv setup), every
// operation must show its inputs and outputs by example, and each error response must show one
// example per code it names, written as the service writes it. Walked from openapi.yaml, so a new
// operation without examples fails here.

const compile = createValidatorCompiler()
const validatorFor = (schema: unknown) => compile({
  schema: inlineSchema(schema) as object,
  httpPart: 'body',
  method: 'GET',
  url: '/'
})

interface Place { where: string, schema: unknown, examples: Example[], name?: string }

/** Every place that holds examples, with its schema: parameters, bodies, response bodies and headers. */
function places (op: Operation): Place[] {
  const out: Place[] = []
  for (const p of op.parameters) {
    out.push({
      where: `${op.operationId} ${p.in} parameter ${p.name}`,
      schema: p.schema,
      examples: examplesOf(p as never),
      name: p.name
    })
  }
  for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
    out.push({
      where: `${op.operationId} request body ${type}`,
      schema: media.schema,
      examples: examplesOf(media as never)
    })
  }
  for (const [status, response] of Object.entries(op.responses)) {
    for (const [type, media] of Object.entries(response.content ?? {})) {
      out.push({
        where: `${op.operationId} ${status} ${type}`,
        schema: media.schema,
        examples: examplesOf(media as never)
      })
    }
    for (const [name, header] of Object.entries(response.headers ?? {})) {
      const h = deref<typeof header>(header)
      out.push({ where: `${op.operationId} ${status} header ${name}`, schema: h.schema, examples: examplesOf(h), name })
    }
  }
  return out
}

const ops = operations()
const codes = new Set(Object.keys(Errors))
const templateOf = (code: ErrorCode) => new (Errors[code] as unknown as new () => Error)().message
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

t.test('every example in the contract is valid under its schema', async t => {
  let count = 0
  const usedComponents = new Set<string>()
  for (const op of ops) {
    for (const place of places(op)) {
      // Parameters and headers are validated as glue hands them to Fastify: a property of an object.
      const named = place.name
      const validate = validatorFor(
        named === undefined ? place.schema : { type: 'object', properties: { [named]: place.schema } }
      )
      for (const ex of place.examples) {
        count++
        if (ex.ref !== undefined) usedComponents.add(ex.ref)
        // Ajv fills defaults in; the contract's text must not change under the check.
        const value = structuredClone(ex.value)
        const ok = validate(named === undefined ? value : { [named]: value })
        t.ok(ok, `${place.where}: example ${ex.name}${ok ? '' : ' ' + JSON.stringify(validate.errors)}`)
      }
    }
  }
  // A component example is checked where it is used; one used nowhere would be checked nowhere.
  const declared = Object.keys(contract.components.examples ?? {}).map(n => `#/components/examples/${n}`)
  t.same(
    declared.filter(ref => !usedComponents.has(ref)), [], 'every components.examples entry is used by an operation'
  )
  t.comment(`${count} examples across ${ops.length} operations (${declared.length} in components.examples)`)
  t.ok(count > ops.length * 3, 'examples were found')
})

t.test('a wrong example fails the check', async t => {
  // The check itself: a VALIDATION_FAILED body without its message, an e-mail that is none.
  const err = validatorFor({ $ref: '#/components/schemas/ErrorResponse' })
  t.notOk(err({ code: 'VALIDATION_FAILED' }), 'ErrorResponse without message refused')
  const invite = validatorFor({ $ref: '#/components/schemas/InviteUserRequest' })
  t.notOk(invite({ email: 'not-an-email', role: 'member' }), 'InviteUserRequest with a bad e-mail refused')
})

t.test('every operation shows its parameters, body and responses by example', async t => {
  for (const op of ops) {
    for (const p of op.parameters) {
      t.ok(
        examplesOf(p as never).length > 0, `${op.operationId}: ${p.in} parameter ${p.name} has an example`
      )
    }
    for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
      t.ok(examplesOf(media as never).length > 0, `${op.operationId}: request body ${type} has an example`)
    }
    for (const [status, response] of Object.entries(op.responses)) {
      for (const [type, media] of Object.entries(response.content ?? {})) {
        t.ok(examplesOf(media as never).length > 0, `${op.operationId}: ${status} ${type} has an example`)
      }
    }
    // A testing tool (Dredd, Schemathesis) needs a value for every path parameter to build a URL; it reads `example`.
    for (const p of op.parameters.filter(p => p.in === 'path')) {
      t.ok(
        'example' in p, `${op.operationId}: path parameter ${p.name} has an \`example\``
      )
    }
  }
})

/** The fields of an operation a VALIDATION_FAILED entry may name, by the `in` of its errors. */
function fieldsOf (op: Operation, part: string): string[] {
  const byIn = (where: string) => op.parameters.filter((p: Parameter) => p.in === where).map(p => p.name)
  switch (part) {
    case 'body': {
      const schema = inlineSchema(
        (op.requestBody?.content['application/json'] ??
          op.requestBody?.content['application/x-www-form-urlencoded'])?.schema
      ) as { properties?: Record<string, unknown> } | undefined
      return ['', ...Object.keys(schema?.properties ?? {})]
    }
    case 'query': case 'querystring': return byIn('query')
    case 'path': case 'params': return byIn('path')
    case 'header': case 'headers': return byIn('header').map(h => h.toLowerCase())
    default: return []
  }
}

// The request parts as Fastify names them when validation fails, and how the service reports each.
const PARTS = ['body', 'querystring', 'params', 'headers']
const reportedIn = (part: string) => ((formatSchemaErrors(
  [{ instancePath: '/x', message: 'm' }], part
) as ServiceError).details?.errors as Array<{ in: string }> | undefined)?.[0]?.in
const partOf = (where: string) => PARTS.find(p => reportedIn(p) === where)

/**
 * What the service's formatter writes for the failing fields an example lists (Fastify validates
 * one part of a request at a time): Ajv errors rebuilt from them, formatted as in production.
 */
function asFormatted (failing: Array<{ in: string, field: string, message: string }>): unknown {
  const ajvErrors = failing.map(e => e.message === 'is not an allowed field'
    ? { keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: e.field } }
    : { keyword: 'x', instancePath: e.field === '' ? '' : '/' + e.field.replaceAll('.', '/'), message: e.message })
  const err = formatSchemaErrors(
    ajvErrors, partOf(failing[0]?.in ?? '') ?? `(no request part is reported as "${failing[0]?.in ?? ''}")`
  ) as ServiceError
  return { message: err.message, code: err.code, details: err.details }
}

t.test('each error response shows one example per code it names, as the service writes it', async t => {
  for (const op of ops) {
    for (const [status, response] of Object.entries(op.responses)) {
      if (Number(status) < 400) continue
      // A HEAD answer has no body, so no code to name or show: its status is the whole answer.
      if (op.method === 'HEAD') {
        t.equal(response.content, undefined, `${op.operationId} ${status}: a HEAD answer declares no body`)
        continue
      }
      // Under /scim/v2 an error is a SCIM error (RFC 7644 §3.12): its examples say its status.
      const scim = (response.content?.['application/scim+json'] ?? undefined) as never
      if (scim !== undefined) {
        for (const { name, value } of examplesOf(scim)) {
          const body = value as { schemas?: string[], status?: string }
          t.same(
            [body.schemas, body.status], [['urn:ietf:params:scim:api:messages:2.0:Error'], status],
            `${op.operationId} ${status} ${name}: a SCIM error with this status`
          )
        }
        continue
      }
      const named = [
        ...response.description.matchAll(/`([A-Z_]+)`/g)
      ].map(m => m[1] as string).filter(c => codes.has(c))
      const examples = examplesOf((response.content?.['application/json'] ?? {}) as never)
      const where = `${op.operationId} ${status}`
      t.ok(named.length > 0, `${where}: the description names its codes`)
      t.same(
        examples.map(e => e.name).sort(), [...new Set(named)].sort(),
        `${where}: one example per code named (${named.join(', ')})`
      )
      for (const { name, value } of examples) {
        const body = value as {
          message: string,
          code: ErrorCode,
          details?: { errors?: Array<{ in: string, field: string, message: string }> }
        }
        t.equal(body.code, name, `${where} ${name}: the example's code is its name (Prism: Prefer: example=${name})`)
        if (!codes.has(body.code)) continue
        const err = new (Errors[body.code] as unknown as new () => Error & { statusCode: number })()
        t.equal(String(err.statusCode), status, `${where} ${name}: the registry answers this code with ${status}`)
        const template = templateOf(body.code)
        t.match(
          body.message, new RegExp('^' + template.split('%s').map(escapeRe).join('.+') + '$'),
          `${where} ${name}: message fits the registry's "${template}"`
        )
        const failing = body.details?.errors
        if (failing === undefined) continue
        // Each failing field is one this operation has (an unknown body field is named as sent).
        for (const e of failing.filter(e => e.message !== 'is not an allowed field')) {
          t.ok(
            fieldsOf(op, e.in).includes(e.field.split('.')[0] as string),
            `${where} ${name}: ${e.in}.${e.field} is a field of ${op.operationId}`
          )
        }
        t.same(
          asFormatted(failing), body,
          `${where} ${name}: the body the service's validation formatter writes for these errors`
        )
      }
    }
  }
})

t.test('docs/clients.md lists every error code a client must handle, with its status', async t => {
  const clients = readFileSync(join(projectRoot, 'docs', 'clients.md'), 'utf8')
  const section = clients.split('## Testing your client against this contract')[1]?.split('\n## ')[0] ?? ''
  for (const [code, Ctor] of Object.entries(Errors)) {
    const status = String(new (Ctor as unknown as new () => { statusCode: number })().statusCode)
    // Each status is written once, followed by its codes: the code must stand after its status.
    t.match(section, new RegExp(`${status}\\s[^;]*\`${code}\``), `docs/clients.md: ${status} ${code}`)
  }
})
