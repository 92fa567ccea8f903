import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { ValidateFunction } from 'ajv'
import { loadContract } from '../../src/app.js'

// Checks a response against openapi.yaml: the status is declared for the operation, the body is
// JSON when the contract says so and matches the declared schema. Used by every suite.

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020
const contract = loadContract() as {
  paths: Record<string, Record<string, Operation>>,
  components: Record<string, Record<string, unknown>>
}
// The document itself is the schema root so `#/components/...` refs resolve; its top-level
// OpenAPI keys are not schema keywords, hence strict: false for this checker only.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true })
addFormats(ajv)
ajv.addSchema({ ...contract, $id: 'contract.json' })

export interface Operation {
  operationId: string
  responses: Record<string, { $ref?: string, content?: Record<string, { schema?: unknown }> }>
}

/** The methods an OpenAPI path item may hold operations under that this contract uses (lower case). */
export const METHODS: readonly string[] = ['get', 'head', 'post', 'put', 'patch', 'delete']

const escape = (s: string) => s.replaceAll('~', '~0').replaceAll('/', '~1')

/** The node a local JSON pointer (`#/components/...`) names in openapi.yaml. */
function pointer (ref: string): unknown {
  if (!ref.startsWith('#/')) throw new Error(`only local $refs are used in openapi.yaml: ${ref}`)
  let node: unknown = contract
  for (const raw of ref.slice(2).split('/')) {
    node = (node as Record<string, unknown>)[raw.replaceAll('~1', '/').replaceAll('~0', '~')]
    if (node === undefined) throw new Error(`$ref ${ref} names nothing`)
  }
  return node
}

/**
 * The one `$ref` resolver of the tests: a Reference Object replaced by what it names in
 * openapi.yaml, through chains of them; anything else returned as it is. Siblings of `$ref`
 * (OpenAPI 3.1's `summary`, `description`) win over the target's; without any, the target itself.
 */
export function deref<T> (node: T | { $ref: string }): T
/** The same, for a node the caller types (the contract is read untyped). */
export function deref<T> (node: unknown): T
export function deref (node: unknown): unknown {
  let out: unknown = node
  while (out !== null && typeof out === 'object' && typeof (out as { $ref?: unknown }).$ref === 'string') {
    const { $ref, ...siblings } = out as { $ref: string }
    const target = pointer($ref)
    out = Object.keys(siblings).length === 0 ? target : { ...(target as object), ...siblings }
  }
  return out
}

export function operations (): Array<{ method: string, path: string, op: Operation }> {
  const out: Array<{ method: string, path: string, op: Operation }> = []
  for (const [path, item] of Object.entries(contract.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) out.push({ method: method.toUpperCase(), path, op })
    }
  }
  return out
}

function findOperation (method: string, url: string): { path: string, op: Operation } {
  const path = url.split('?')[0] as string
  for (const o of operations()) {
    const re = new RegExp('^' + o.path.replace(/\{[^}]+\}/g, '[^/]+') + '$')
    if (o.method === method.toUpperCase() && re.test(path)) return o
  }
  throw new Error(`no operation in openapi.yaml for ${method} ${path}`)
}

const validators = new Map<string, ValidateFunction>()

export interface ContractResponse { statusCode: number, headers: Record<string, unknown>, body: string }

/** Problems with this response under the contract; empty when it conforms. */
export function contractProblems (method: string, url: string, res: ContractResponse): string[] {
  const { path, op } = findOperation(method, url)
  const status = String(res.statusCode)
  let at = `#/paths/${escape(path)}/${method.toLowerCase()}/responses/${status}`
  let response = op.responses[status]
  if (response === undefined) {
    return [
    `${method} ${path} (${op.operationId}) answered ${status}, which the contract does not declare (declared: ${Object.keys(op.responses).join(', ')})`
    ]
  }
  if (response.$ref !== undefined) {
    at = response.$ref
    response = deref(response)
  }
  const content = response.content
  if (content === undefined) {
    return res.body.length === 0
      ? []
      : [
      `${op.operationId} ${status} declares no body but got ${res.body.slice(0, 100)}`
        ]
  }
  const type = String(res.headers['content-type'] ?? '').split(';')[0]?.trim() ?? ''
  if (!(type in content)) {
    return [
    `${op.operationId} ${status} content-type ${type} not declared (${Object.keys(content).join(', ')})`
    ]
  }
  // JSON bodies are checked against their schema: the API's and SCIM's (/scim/v2).
  if (type !== 'application/json' && type !== 'application/scim+json') return []
  let body: unknown
  try { body = JSON.parse(res.body) } catch {
    return [
    `${op.operationId} ${status} body is not JSON: ${res.body.slice(0, 100)}`
    ]
  }
  const ref = `contract.json${at}/content/${escape(type)}/schema`
  let validate = validators.get(ref)
  if (validate === undefined) {
    validate = ajv.compile({ $ref: ref })
    validators.set(ref, validate)
  }
  if (!validate(body)) {
    return [
    `${op.operationId} ${status} body does not match the contract: ${ajv.errorsText(validate.errors)} in ${res.body.slice(0, 300)}`
    ]
  }
  return []
}

/** tap assertion: the response conforms to the contract. */
export function assertContract (
  t: { same: (a: unknown, b: unknown, msg: string) => unknown },
  method: string,
  url: string,
  res: ContractResponse,
  msg = `${method} ${url} → ${res.statusCode} conforms to openapi.yaml`
): void {
  t.same(contractProblems(method, url, res), [], msg)
}
