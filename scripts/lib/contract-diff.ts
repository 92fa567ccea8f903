// What changed between two versions of the contract, as a client sees it: api-smart-diff compares
// the two documents ($refs resolved, so a change to a shared schema shows at every operation that
// uses it) and classifies each difference; the rules below tighten that classification where a
// generated client would break and the differ says otherwise, and word each change for the
// changelog. Used by scripts/contract.ts (the CI gate and the changelog) and its tests.
import { apiCompare, type Diff } from 'api-smart-diff'

type Json = Record<string, unknown>

type Kind = 'breaking' | 'non-breaking' | 'deprecated'
export type Section = 'added' | 'changed' | 'deprecated' | 'removed'

export interface Change {
  kind: Kind
  section: Section
  /** The change in words, without the operation: "response 200 `items[].status`: enum value `bounced` added". */
  text: string
  /** Where: "GET /api/invitations", "webhook invitation.created", or "document". */
  operation: string
}

const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])
/** Webhooks are diffed as pseudo-paths whose payload is a response (below): this prefixes them. */
const WEBHOOK = 'webhook '
/**
 * Documentation only: not compared (a reworded description is not a contract change; neither are
 * the words of an enum's values, `x-enumDescriptions`, which come with every new scope, nor the
 * name a reference shows for a tag, `x-displayName`).
 */
const PROSE = new Set([
  'description', 'summary', 'example', 'examples', 'externalDocs', 'x-codeSamples', 'x-enumDescriptions',
  'x-displayName'
])

/**
 * The differences between two contracts that a client can feel, classified and worded. Prose
 * (descriptions, examples) is left out, and so are `components` (their effect is reported at each
 * operation that uses them), except security schemes, which operations name rather than embed.
 */
export function diffContracts (before: Json, after: Json): Change[] {
  const a = comparable(before)
  const b = comparable(after)
  const { diffs } = compareQuietly(a, b)
  const changes: Change[] = []
  for (const diff of diffs) changes.push(...describe(diff, a, b))
  return changes
}

/**
 * apiCompare without its "Classification Rule error for node: … .required.. Cannot read properties
 * of undefined (reading 'default')" lines. api-smart-diff's rule for an entry added to or removed
 * from a schema's `required` reads that property's `default` in the same schema; ours name
 * properties declared in a sibling `allOf` branch (the webhook payloads' `data`), so the rule
 * throws, prints that line, and leaves the difference unclassified — which describe() counts as
 * breaking, as the gate does with every unclassified difference. Nothing is lost but the noise
 * (docs/contract-versioning.md says so). apiCompare is synchronous: console.error is restored
 * before anything else runs.
 */
function compareQuietly (before: Json, after: Json): ReturnType<typeof apiCompare> {
  const original = console.error
  console.error = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].startsWith('Classification Rule error for node: ')) return
    original(...args)
  }
  try {
    return apiCompare(before, after)
  } finally {
    console.error = original
  }
}

/** A copy fit for comparison: webhooks as paths whose payload is a response, prose removed. */
function comparable (doc: Json): Json {
  const copy = structuredClone(doc)
  const paths = (copy.paths ?? {}) as Json
  // The service sends a webhook's request and the client receives it: for compatibility its body
  // is what a response is to an operation (a removed field breaks the receiver, an added one
  // does not), so it is compared as one.
  for (const [name, item] of Object.entries((copy.webhooks ?? {}) as Record<string, Json>)) {
    const pseudo: Json = {}
    for (const [method, op] of Object.entries(item)) {
      const operation = op as Json
      const body = operation.requestBody as Json | undefined
      const content = Object.fromEntries(Object.entries((body?.content ?? {}) as Record<string, Json>)
        .map(([type, media]) => [type, { ...media, schema: mergedPayload(copy, media.schema) }]))
      pseudo[method] = {
        ...(operation.deprecated === true ? { deprecated: true } : {}),
        responses: { payload: { content } }
      }
    }
    paths[`${WEBHOOK}${name}`] = pseudo
  }
  delete copy.webhooks
  copy.paths = paths
  stripProse(copy, '')
  // The version is what the gate checks, not a change of its own.
  if (typeof copy.info === 'object' && copy.info !== null) delete (copy.info as Json).version
  return copy
}

/**
 * A webhook's payload, `allOf: [$ref Event, {properties: {type: {const}, data: {$ref EventData,
 * required}}}]`, as one schema: Event's properties with the overlay's laid over them (a `$ref`
 * with sibling keywords is the referenced schema plus those keywords). api-smart-diff pairs allOf
 * branches by position and, when EventData gained three or more fields at once, reported each
 * payload's branches as rewritten: dozens of false "breaking" changes. Merged, a new field is an
 * addition and a field no longer required is still breaking. Anything of another shape is left as is.
 */
function mergedPayload (doc: Json, schema: unknown): unknown {
  const allOf = (schema as Json | undefined)?.allOf
  if (!Array.isArray(allOf) || allOf.length !== 2) return schema
  const base = deref(doc, allOf[0]) as Json | undefined
  const overlay = allOf[1] as Json | undefined
  if (base?.properties === undefined || overlay?.properties === undefined || overlay.allOf !== undefined) return schema
  const properties: Json = { ...(base.properties as Json) }
  for (const [name, value] of Object.entries(overlay.properties as Record<string, Json>)) {
    const { $ref, ...siblings } = value
    properties[name] = typeof $ref === 'string' ? { ...(deref(doc, { $ref }) as Json), ...siblings } : value
  }
  const listed = (schema: Json) => (schema.required as string[] | undefined) ?? []
  const required = [...new Set([...listed(base), ...listed(overlay)])]
  return { ...structuredClone(base), properties, ...(required.length > 0 ? { required } : {}) }
}

function stripProse (node: unknown, key: string): void {
  if (Array.isArray(node)) {
    for (const item of node) stripProse(item, '')
    return
  }
  if (typeof node !== 'object' || node === null) return
  const obj = node as Json
  for (const k of Object.keys(obj)) {
    // Under `properties` the keys are field names: a field called `description` stays.
    if (key !== 'properties' && PROSE.has(k)) delete obj[k]
    else stripProse(obj[k], k)
  }
}

function describe (diff: Diff, before: Json, after: Json): Change[] {
  if (diff.type === 'annotation') return []
  const path = diff.path.map(String)
  const [top, second] = path
  if (top === 'components') {
    if (second !== 'securitySchemes') return []
    return [change(diff, `security scheme \`${path[2] ?? ''}\` ${path.slice(3).join('.') || ''}`.trim(), 'document')]
  }
  // A tag added (at the end: one inserted shifts the others' indexes) groups operations in the
  // reference and in generated clients; no request or response changes.
  if (top === 'tags' && path.length === 2 && diff.action === 'add') {
    const name = String((diff.after as Json | undefined)?.name ?? '')
    return [change(diff, `tag \`${name}\` added`, 'document', 'non-breaking')]
  }
  if (top !== 'paths') return [change(diff, `${path.join('.')}`, 'document')]
  const route = path[1] ?? ''
  const webhook = route.startsWith(WEBHOOK)
  // A whole path added or removed: one change per operation it holds.
  if (path.length === 2) {
    const item = ((diff.action === 'remove' ? diff.before : diff.after) ?? {}) as Json
    return Object.keys(item).filter(m => METHODS.has(m))
      .map(m => change(diff, webhook ? 'webhook' : 'operation', label(route, m)))
  }
  const method = path[2] ?? ''
  if (!METHODS.has(method)) {
    // Path-level parameters apply to every operation of the path.
    return [change(diff, location(path.slice(2), path.slice(0, 2), diff, before, after), route)]
  }
  const operation = label(route, method)
  const rest = path.slice(3)
  if (rest.length === 0) return [change(diff, webhook ? 'webhook' : 'operation', operation)]
  if (rest.length === 1 && rest[0] === 'deprecated') {
    const what = `${webhook ? 'webhook' : 'operation'} ${diff.after === true ? 'deprecated' : 'no longer deprecated'}`
    return [change(diff, what, operation)]
  }
  if (rest.length === 1 && rest[0] === 'parameters' && diff.action !== 'replace') {
    // A whole list added or removed: one change per parameter in it.
    const list = (diff.action === 'add' ? diff.after : diff.before) as Json[] | undefined
    const doc = diff.action === 'add' ? after : before
    return (Array.isArray(list) ? list : []).map(p => deref(doc, p) as Json).map(p => change(
      diff,
      `${String(p.in)} parameter \`${String(p.name)}\` ${diff.action === 'add' ? verb(diff, p) : 'removed'}`,
      operation,
      diff.action === 'add' ? (p.required === true ? 'breaking' : 'non-breaking') : 'breaking'
    ))
  }
  const opened = openedOrClosed(path, diff, before, after)
  if (opened !== undefined) {
    const where = location(rest.slice(0, -2), path.slice(0, 3), diff, before, after).replace(/ (added|removed)$/, '')
    const words = opened === 'opened'
      ? 'enum opened (any other string besides the known values)'
      : 'enum closed (only the known values)'
    // Opening a response's enum breaks a client that switches on it; closing any open enum takes
    // back the promise that new values are additions (docs/contract-versioning.md).
    const kind = opened === 'closed' || rest[0] === 'responses' ? 'breaking' : 'non-breaking'
    return [change(diff, `${where}: ${words}`, operation, kind)]
  }
  const where = location(rest, path.slice(0, 3), diff, before, after)
  return [change(diff, where, operation, rules(path, diff, before, after))]
}

/**
 * An open enum's plain-string branch added (`opened`) or removed (`closed`): an anyOf/oneOf
 * branch `{type: string}` without an enum, beside a branch that lists the known values.
 */
function openedOrClosed (path: string[], diff: Diff, before: Json, after: Json): 'opened' | 'closed' | undefined {
  const n = path.length
  if (n < 2 || (path[n - 2] !== 'anyOf' && path[n - 2] !== 'oneOf')) return undefined
  if (diff.action !== 'add' && diff.action !== 'remove') return undefined
  const doc = diff.action === 'add' ? after : before
  const branch = deref(doc, diff.action === 'add' ? diff.after : diff.before) as Json | undefined
  if (branch?.type !== 'string' || branch.enum !== undefined) return undefined
  const siblings = resolve(doc, path.slice(0, n - 1))
  const known = Array.isArray(siblings) && siblings.some(b => Array.isArray((deref(doc, b) as Json | undefined)?.enum))
  if (!known) return undefined
  return diff.action === 'add' ? 'opened' : 'closed'
}

function label (route: string, method: string): string {
  return route.startsWith(WEBHOOK) ? route : `${method.toUpperCase()} ${route}`
}

/**
 * Where api-smart-diff's classification is not what a generated client meets. A new status on an
 * existing operation breaks a client that handles the declared statuses (a typed client's
 * response union, a switch on the code): it meets one it was never told about. (A `parameters`
 * list added where there was none, which the differ calls an annotation, is split above into
 * one change per parameter: a required one is a new required input like any other.) A value added
 * to an enum of a response breaks a client that switches on it, unless the enum is open: one
 * branch of an anyOf/oneOf beside a plain string (ErrorResponse's `code`: ErrorCode or any other
 * code, "accept unknown codes too"), where it is an addition. The differ says one or the other
 * depending on how the response is reached ($ref or inline); these say the same everywhere. A
 * known value removed from an open enum is breaking wherever it is (a client's type names it).
 */
function rules (path: string[], diff: Diff, before: Json, after: Json): Kind | undefined {
  const rest = path.slice(3)
  // One type for another (`string` → `integer`) breaks whoever reads or writes the value, request
  // or response; api-smart-diff called it non-breaking in a response.
  if (diff.action === 'replace' && path.at(-1) === 'type' && typeof diff.before === 'string' &&
    typeof diff.after === 'string') return 'breaking'
  if (diff.action === 'add' && rest.length === 2 && rest[0] === 'responses') return 'breaking'
  const enumAt = path.lastIndexOf('enum')
  if (diff.action === 'add' && rest[0] === 'responses' && enumAt === path.length - 2) {
    return openEnum(after, path.slice(0, enumAt)) ? 'non-breaking' : 'breaking'
  }
  // A known value taken out of an open enum: a client's type names it (and code compares with it).
  const removed = diff.action === 'remove' && enumAt === path.length - 2
  if (removed && openEnum(before, path.slice(0, enumAt))) return 'breaking'
  return undefined
}

/** Whether the enum at `path` is one branch of an anyOf/oneOf that also takes any string. */
function openEnum (doc: Json, path: string[]): boolean {
  const at = Math.max(path.lastIndexOf('anyOf'), path.lastIndexOf('oneOf'))
  if (at < 0) return false
  const branches = resolve(doc, path.slice(0, at + 1))
  if (!Array.isArray(branches)) return false
  return branches.some((b, i) => {
    const branch = deref(doc, b) as Json | undefined
    return String(i) !== path[at + 1] && branch?.type === 'string' && branch.enum === undefined
  })
}

function change (diff: Diff, what: string, operation: string, override?: Kind): Change {
  // Unclassified differences count as breaking: the gate errs on the side of the client.
  const kind: Kind = override ??
    (diff.type === 'deprecated' ? 'deprecated' : diff.type === 'non-breaking' ? 'non-breaking' : 'breaking')
  const section: Section = kind === 'deprecated'
    ? 'deprecated'
    : diff.action === 'remove' ? 'removed' : diff.action === 'add' && kind === 'non-breaking' ? 'added' : 'changed'
  const text = diff.path.length <= 3 && (what === 'operation' || what === 'webhook')
    ? `${what} ${diff.action === 'remove' ? 'removed' : 'added'}`
    : what
  return { kind, section, text, operation }
}

/** "response 200 `items[].status`: enum value `bounced` added" from the diff's path. */
function location (rest: string[], prefix: string[], diff: Diff, before: Json, after: Json): string {
  const doc = diff.action === 'remove' ? before : after
  const parts: string[] = []
  let i = 0
  const at = (n: number) => rest[n] ?? ''
  if (at(0) === 'parameters' && rest.length > 1) {
    const param = resolve(doc, [...prefix, 'parameters', at(1)]) as Json | undefined
    parts.push(param === undefined ? `parameter #${at(1)}` : `${String(param.in)} parameter \`${String(param.name)}\``)
    i = 2
    if (at(i) === 'schema') i++
  } else if (at(0) === 'requestBody') {
    parts.push('request body')
    i = 1
  } else if (at(0) === 'responses' && rest.length > 1) {
    parts.push(at(1) === 'payload' && prefix[1]?.startsWith(WEBHOOK) === true ? 'payload' : `response ${at(1)}`)
    i = 2
    if (at(i) === 'headers') {
      // A whole `headers` map added or removed names the headers it holds.
      const held = Object.keys(((diff.action === 'remove' ? diff.before : diff.after) ?? {}) as Json)
      const names = at(i + 1) !== '' ? [at(i + 1)] : held
      parts.push(`header${names.length === 1 ? '' : 's'} ${names.map(n => `\`${n}\``).join(', ')}`)
      i += 2
      if (at(i) === 'schema') i++
    }
  } else if (at(0) === 'x-fastify-config') {
    parts.push('server config')
    i = 1
  }
  if (at(i) === 'content') {
    const mediaType = at(i + 1)
    if (mediaType !== 'application/json' && mediaType !== '') parts.push(`(${mediaType})`)
    i += 2
    if (at(i) === 'schema') i++
  }
  const fields: string[] = []
  while (i < rest.length) {
    const s = at(i)
    if (s === 'properties' && i + 1 < rest.length) {
      fields.push(at(i + 1))
      i += 2
    } else if (s === 'items') {
      fields.push('[]')
      i++
    } else if (s === 'additionalProperties' && i + 1 < rest.length) {
      fields.push('{*}')
      i++
    } else if ((s === 'allOf' || s === 'oneOf' || s === 'anyOf') && i + 1 < rest.length) {
      fields.push(`(${s} ${at(i + 1)})`)
      i += 2
    } else break
  }
  const field = fields.join('.').replaceAll('.[]', '[]')
  if (field !== '') parts.push(`\`${field}\``)
  const keyword = rest.slice(i)
  const where = parts.join(' ')
  if (keyword.length === 0) return `${where} ${verb(diff, diff.after)}`.trim()
  return `${where}: ${wording(keyword, diff)}`.replace(/^: /, '')
}

/** "removed", "added", "added (required)" for a parameter that is, or "changed a → b". */
function verb (diff: Diff, added: unknown): string {
  if (diff.action === 'remove') return 'removed'
  if (diff.action !== 'add') return `changed ${show(diff.before)} → ${show(diff.after)}`
  return typeof added === 'object' && added !== null && (added as Json).required === true ? 'added (required)' : 'added'
}

/** What became of the value: "added", "removed", "replaced `x`" (for a replace). */
function fate (diff: Diff, words: { add: string, remove: string, replace: string }): string {
  return diff.action === 'remove' ? words.remove : diff.action === 'add' ? words.add : words.replace
}

function wording (keyword: string[], diff: Diff): string {
  const [word = '', index] = keyword
  if ((word === 'enum' || word === 'required') && index !== undefined) {
    const value = diff.action === 'remove' ? diff.before : diff.after
    if (word === 'enum') {
      const replaced = `replaced ${show(diff.before)}`
      return `enum value ${show(value)} ${fate(diff, { add: 'added', remove: 'removed', replace: replaced })}`
    }
    const words = { add: 'now required', remove: 'no longer required', replace: 'required (replaced)' }
    return `${show(value)} ${fate(diff, words)}`
  }
  if (word === 'type' && index !== undefined) {
    const type = show(diff.action === 'remove' ? diff.before : diff.after)
    return `type ${type} ${fate(diff, { add: 'allowed', remove: 'no longer allowed', replace: 'allowed' })}`
  }
  if (word === 'deprecated' && index === undefined) return diff.after === true ? 'deprecated' : 'no longer deprecated'
  const name = keyword.join('.')
  if (diff.action === 'add') return `${name} ${show(diff.after)} added`
  if (diff.action === 'remove') return `${name} ${show(diff.before)} removed`
  return `${name} ${show(diff.before)} → ${show(diff.after)}`
}

function show (value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? 'undefined'
  return `\`${text.length > 80 ? `${text.slice(0, 77)}…` : text}\``
}

/** The node at `path`, following local $refs on the way (parameters are usually references). */
function resolve (doc: Json, path: string[]): unknown {
  let node: unknown = doc
  for (const key of path) {
    node = deref(doc, node)
    if (typeof node !== 'object' || node === null) return undefined
    node = (node as Json)[key]
  }
  return deref(doc, node)
}

function deref (doc: Json, node: unknown): unknown {
  let current = node
  for (let hops = 0; hops < 10; hops++) {
    const ref = typeof current === 'object' && current !== null ? (current as Json).$ref : undefined
    if (typeof ref !== 'string' || !ref.startsWith('#/')) return current
    current = ref.slice(2).split('/').map(s => s.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((n, k) => (typeof n === 'object' && n !== null ? (n as Json)[k] : undefined), doc)
  }
  return current
}
