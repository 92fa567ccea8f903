import { loadContract } from '../../src/app.js'
import { deref } from './contract.js'

// Walks openapi.yaml for the examples it gives: every parameter, request body, response body and
// response header of every operation, with the schema each example must satisfy. Used by the
// example checks (contract-examples.test.ts) and by the Prism mock test, which sends the request
// examples and expects the response examples back.

type Node = Record<string, unknown>

export const contract = loadContract() as Node & {
  paths: Record<string, Record<string, Node>>,
  components: Record<string, Record<string, Node>>
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** A schema with every `$ref` inlined, as Fastify's compiler receives it from glue. */
export function inlineSchema (schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(inlineSchema)
  if (schema === null || typeof schema !== 'object') return schema
  const node = deref(schema as Node)
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, inlineSchema(v)]))
}

export interface Example { name: string, value: unknown, ref?: string }

/** The examples of a parameter, media type or header: `example`, or each entry of `examples`. */
export function examplesOf (holder: Node): Example[] {
  if ('example' in holder) return [{ name: 'example', value: holder.example }]
  const map = holder.examples as Record<string, Node> | undefined
  return Object.entries(map ?? {}).map(([name, ex]) => {
    const r = deref(ex)
    return { name, value: r.value, ...(typeof ex.$ref === 'string' ? { ref: ex.$ref } : {}) }
  })
}

export interface Parameter {
  name: string,
  in: string,
  required?: boolean,
  schema: unknown,
  example?: unknown,
  examples?: unknown
}
interface MediaType { schema?: unknown, example?: unknown, examples?: Record<string, Node> }
interface Response { description: string, content?: Record<string, MediaType>, headers?: Record<string, Node> }

export interface Operation {
  method: string
  path: string
  operationId: string
  parameters: Parameter[]
  security: Array<Record<string, string[]>>
  /** `x-api-key: never`: the operation refuses API keys. */
  apiKey?: 'never'
  /** `x-api-key-admin-scope`: what a key also needs when the request makes or unmakes an admin. */
  apiKeyAdminScope?: string
  requestBody?: { required?: boolean, content: Record<string, MediaType> }
  responses: Record<string, Response>
}

/** Every operation with its references resolved (parameters of the path item included). */
export function operations (): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries(contract.paths)) {
    const shared = (item.parameters as Node[] | undefined) ?? []
    for (const method of METHODS) {
      const op = item[method] as Node | undefined
      if (op === undefined) continue
      const own = (op.parameters as Node[] | undefined) ?? []
      const body = op.requestBody as Node | undefined
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId as string,
        parameters: [...shared, ...own].map(p => deref(p) as unknown as Parameter),
        security: (op.security ?? contract.security ?? []) as Array<Record<string, string[]>>,
        ...(op['x-api-key'] === 'never' ? { apiKey: 'never' as const } : {}),
        ...(typeof op['x-api-key-admin-scope'] === 'string' ? { apiKeyAdminScope: op['x-api-key-admin-scope'] } : {}),
        ...(body !== undefined
          ? {
              requestBody: deref(body) as unknown as NonNullable<Operation['requestBody']>
            }
          : {}),
        responses: Object.fromEntries(
          Object.entries(
            op.responses as Record<string, Node>
          ).map(([status, r]) => [status, deref(r) as unknown as Response])
        )
      })
    }
  }
  return out
}

/** The example to send for a parameter (the first one). */
export function parameterExample (p: Parameter): unknown {
  return examplesOf(p as unknown as Node)[0]?.value
}
