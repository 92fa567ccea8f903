import type { ServiceError } from '../errors.js'

// Every error answer under /api/scim/v2 (and the deprecated /scim/v2) is a SCIM error (RFC 7644
// §3.12), the framework's own included: the registry's error, its status as a string, its message
// as `detail`, and the scimType a directory acts on where one applies. The service raises registry errors as
// everywhere else; only their shape on the wire differs.

/** SCIM's base path: every SCIM operation is under it, and every error answer there is a SCIM error. */
const SCIM_BASE_PATH = '/api/scim/v2'
/**
 * The first base path, outside /api: deprecated in contract 2.1 (sunset 2027-06-30), the same
 * operations answer under it (with Deprecation and Sunset) so directories set up before keep working.
 */
const DEPRECATED_BASE_PATH = '/scim/v2'

/** Where SCIM's operations are: the canonical base path first, then the deprecated one. */
export const SCIM_BASE_PATHS: readonly string[] = [SCIM_BASE_PATH, DEPRECATED_BASE_PATH]

/** The base URL a directory is given, and resources' `meta.location` start with. */
export function scimBaseUrl (publicUrl: string): string {
  return `${publicUrl}${SCIM_BASE_PATH}`
}
export const SCIM_MEDIA_TYPE = 'application/scim+json; charset=utf-8'
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'

type ScimType = 'invalidFilter' | 'uniqueness' | 'mutability' | 'invalidSyntax' | 'invalidPath' | 'invalidValue'

const SCIM_TYPE: Partial<Record<string, ScimType>> = {
  SCIM_INVALID_FILTER: 'invalidFilter',
  SCIM_INVALID_PATH: 'invalidPath',
  SCIM_MUTABILITY: 'mutability',
  SCIM_UNIQUENESS: 'uniqueness',
  USER_EXISTS: 'uniqueness',
  VALIDATION_FAILED: 'invalidValue',
  INVALID_JSON: 'invalidSyntax'
}

export interface ScimErrorBody { schemas: [string], status: string, scimType?: ScimType, detail: string }

const under = (url: string, base: string): boolean =>
  url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`)

/**
 * Whether a request's URL (path and query) is under a SCIM base path. Routes there are answered by
 * SCIM's own context (src/routes/scim.ts); this is for what is refused before any route is found
 * (a malformed URL, a parameter too long: src/server-options.ts), when the URL is all there is.
 */
export function isScimUrl (url: string): boolean {
  return under(url, SCIM_BASE_PATH) || under(url, DEPRECATED_BASE_PATH)
}

export function scimErrorBody (err: ServiceError): ScimErrorBody {
  const body: ScimErrorBody = { schemas: [ERROR_SCHEMA], status: String(err.statusCode), detail: err.message }
  const scimType = SCIM_TYPE[err.code]
  if (scimType !== undefined) body.scimType = scimType
  // The registry's words name the JSON media type only; SCIM takes its own as well.
  if (err.code === 'UNSUPPORTED_MEDIA_TYPE') {
    body.detail = 'Content-Type must be application/scim+json or application/json'
  }
  return body
}
