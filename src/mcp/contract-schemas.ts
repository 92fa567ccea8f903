// MCP tool schemas taken from openapi.yaml, not written a second time: a tool's input is its REST
// operation's JSON body, or its query/path parameters gathered into one object; its output is the
// operation's 200 body. $refs are inlined (tool schemas travel alone, without the contract).

type Json = Record<string, unknown>

interface ContractOperation {
  operationId?: string
  security?: Array<Record<string, string[]>>
  parameters?: Json[]
  requestBody?: { content?: Record<string, { schema?: Json }> }
  responses?: Record<string, Json>
}

interface ContractDoc {
  paths: Record<string, Record<string, unknown>>,
  components: Record<string, Record<string, Json>>
}

function resolveRef (doc: ContractDoc, ref: string): Json {
  const m = /^#\/components\/([A-Za-z]+)\/([A-Za-z0-9_.-]+)$/.exec(ref)
  const target = m === null ? undefined : doc.components[m[1] as string]?.[m[2] as string]
  if (target === undefined) throw new Error(`openapi.yaml: unresolvable $ref ${ref}`)
  return target
}

/**
 * A deep copy with every `$ref` replaced by what it names (the contract's schemas are not
 * recursive). Keywords beside a `$ref` (OpenAPI 3.1 allows them: a field's own description of a
 * shared schema) are kept over the named schema's.
 */
function inlineRefs (doc: ContractDoc, value: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('openapi.yaml: $ref nesting too deep (recursive schema?)')
  if (Array.isArray(value)) return value.map(v => inlineRefs(doc, v, depth + 1))
  if (value === null || typeof value !== 'object') return value
  const obj = value as Json
  if (typeof obj.$ref === 'string') {
    const { $ref, ...beside } = obj
    return inlineRefs(doc, { ...resolveRef(doc, $ref), ...beside }, depth + 1)
  }
  const out: Json = {}
  for (const [k, v] of Object.entries(obj)) out[k] = inlineRefs(doc, v, depth + 1)
  return out
}

/** The same schema without `x-` extensions (e.g. x-trim), for clients that know only JSON Schema. */
export function withoutExtensions (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutExtensions)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value as Json).filter(([k]) => !k.startsWith('x-')).map(([k, v]) => [k, withoutExtensions(v)])
  )
}

function findOperation (
  doc: ContractDoc,
  operationId: string
): { path: string, op: ContractOperation, pathParams: Json[] } {
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue
      if ((op as ContractOperation).operationId === operationId) {
        return { path, op: op as ContractOperation, pathParams: ((item as { parameters?: Json[] }).parameters ?? []) }
      }
    }
  }
  throw new Error(`openapi.yaml has no operation ${operationId}`)
}

export interface ToolSchemas {
  input: Json
  output: Json
}

/**
 * Input and output schemas of the tool that mirrors `operationId`. `rename` maps contract
 * parameter names to tool argument names (e.g. invitationId → id).
 */
export function toolSchemasFor (
  contract: Record<string, unknown>,
  operationId: string,
  rename: Record<string, string> = {}
): ToolSchemas {
  const doc = contract as unknown as ContractDoc
  const { op, pathParams } = findOperation(doc, operationId)
  const body = op.requestBody?.content?.['application/json']?.schema
  const params = [...pathParams, ...(op.parameters ?? [])].map(p => inlineRefs(doc, p) as Json)
    .filter(p => p.in === 'path' || (body === undefined && p.in === 'query'))
  const properties: Json = {}
  const required: string[] = []
  for (const p of params) {
    const name = rename[p.name as string] ?? p.name as string
    properties[name] = {
      ...(p.schema as Json),
      ...(typeof p.description === 'string' ? { description: p.description } : {})
    }
    if (p.required === true) required.push(name)
  }
  let input: Json = { type: 'object', additionalProperties: false, properties }
  if (body !== undefined) {
    // The body's fields, and the path's (approve_invite_request: its id and the body's role).
    const b = inlineRefs(doc, body) as Json
    input = { ...b, properties: { ...properties, ...(b.properties as Json | undefined) } }
    required.push(...(b.required as string[] | undefined ?? []))
  }
  if (required.length > 0) input.required = required
  // The success body: 200, or the first 2xx the operation declares
  // (create_invite_link, add_domain: 201; invite_many: 201 or 202, one schema).
  const status = ['200', ...Object.keys(op.responses ?? {}).filter(s => /^2\d\d$/.test(s))]
    .find(s => op.responses?.[s] !== undefined)
  const ok = (status !== undefined ? op.responses?.[status] : undefined) as
    { content?: Record<string, { schema?: Json }> } | undefined
  const output = ok?.content?.['application/json']?.schema
  if (output === undefined) throw new Error(`openapi.yaml: ${operationId} declares no JSON 2xx body`)
  return { input, output: inlineRefs(doc, output) as Json }
}

/** The scopes an API key needs for an operation: those its `apiKey` security requirement names. */
export function keyScopesOf (doc: ContractDoc, operationId: string): string[] {
  const { op } = findOperation(doc, operationId)
  const requirement = (op.security ?? []).find(r => 'apiKey' in r)
  if (requirement === undefined) throw new Error(`openapi.yaml: ${operationId} is not open to API keys`)
  return requirement.apiKey ?? []
}
