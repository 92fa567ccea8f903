import { ScimError, scimPatch, type ScimPatchOperation, type ScimResource } from 'scim-patch'
import { serviceError } from '../errors.js'
import { scimBoolean } from './resources.js'

// PATCH (RFC 7644 §3.5.2) as Okta and Entra ID really send it, applied by scim-patch. In front of
// it, a thin normalizer for the two clients' habits:
//  - `op` in any case (Entra ID: `Replace`, `Add`);
//  - a path-less `add`/`replace` whose value is an object (Okta: `{"active": false}`; Entra ID:
//    dotted keys, `{"name.givenName": "Grace"}`) becomes one operation per key, a complex value
//    (`{"name": {"givenName": …}}`) one per sub-attribute, so sub-attributes merge as the RFC says;
//  - `"True"` / `"False"` for `active` and `primary` become booleans;
//  - paths into attributes this service does not keep (`phoneNumbers[…]`, the enterprise
//    extension, `title` …) are dropped: RFC 7644 lets a provider ignore what it does not keep.

interface RawOperation { op: string, path?: string, value?: unknown }

const CORE_URN = /^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/i
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The attribute a path starts at, lower case: `emails[type eq "work"].value` → `emails`. */
function rootOf (path: string): string {
  return (/^[^[.]*/.exec(path)?.[0] ?? path).toLowerCase()
}

function booleanish (path: string, value: unknown): unknown {
  const last = path.split(/[.\]]/).filter(p => p !== '').pop()?.toLowerCase()
  if (last !== 'active' && last !== 'primary') return value
  return scimBoolean(value) ?? value
}

/** The operations scim-patch is given: normalized, and only those on attributes in `kept`. */
export function normalizeOperations (operations: RawOperation[], kept: ReadonlySet<string>): ScimPatchOperation[] {
  const out: ScimPatchOperation[] = []
  const push = (op: string, path: string, value: unknown) => {
    const bare = path.replace(CORE_URN, '')
    const root = rootOf(bare)
    // `meta` and `schemas` are the service's (dropped); `id` too: a change of it is refused.
    if (root === 'meta' || root === 'schemas') return
    if (root === 'id' && !kept.has(root)) throw serviceError('SCIM_MUTABILITY', ['id is set by the service'])
    if (!kept.has(root)) return
    if (op === 'remove') {
      // Entra ID removes members by a value array (`[{"$ref": null, "value": "…"}]`): as filters,
      // which match whatever else the stored entries carry.
      const byValue = Array.isArray(value) && !bare.includes('[') &&
        value.every(v => isObject(v) && typeof v.value === 'string' && !v.value.includes('"'))
      if (byValue) {
        for (const v of value as Array<{ value: string }>) {
          out.push({ op: 'remove', path: `${bare}[value eq "${v.value}"]` })
        }
        return
      }
      out.push(value === undefined
        ? { op: 'remove', path: bare }
        : { op: 'remove', path: bare, value } as ScimPatchOperation)
      return
    }
    // A complex attribute's sub-attributes one by one: they merge with the ones not given.
    if (isObject(value) && !bare.includes('[') && !bare.includes('.') &&
      Object.keys(value).every(sub => /^[A-Za-z][\w$-]*$/.test(sub))) {
      for (const [sub, v] of Object.entries(value)) {
        out.push({ op: op as 'add', path: `${bare}.${sub}`, value: booleanish(sub, v) })
      }
      return
    }
    out.push({ op: op as 'add', path: bare, value: booleanish(bare, value) })
  }
  for (const raw of operations) {
    const op = raw.op.toLowerCase()
    if (raw.path !== undefined) {
      push(op, raw.path, raw.value)
    } else if (op !== 'remove' && isObject(raw.value)) {
      for (const [key, value] of Object.entries(raw.value)) push(op, key, value)
    } else {
      throw serviceError('SCIM_INVALID_PATH', [`a ${op} without a path needs an object value`])
    }
  }
  return out
}

/** The resource with the operations applied (a copy), or 400 with the scimType scim-patch names. */
export function applyPatch<T extends Record<string, unknown>> (resource: T, operations: ScimPatchOperation[]): T {
  try {
    const options = { mutateDocument: false, treatMissingAsAdd: true }
    return scimPatch(resource as unknown as ScimResource, operations, options) as unknown as T
  } catch (err) {
    // What the library refuses is the request's doing (a path or value it cannot apply): 400.
    if (!(err instanceof ScimError)) throw serviceError('SCIM_INVALID_PATH', ['the operation cannot be applied'])
    const why = err.message.slice(0, 200)
    throw err.scimCode === 'invalidValue' || err.scimCode === 'invalidSyntax'
      ? serviceError('VALIDATION_FAILED', [why])
      : serviceError('SCIM_INVALID_PATH', [why])
  }
}
