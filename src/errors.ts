import createError from '@fastify/error'

// The error registry: every error the service raises on purpose is created here, once. A test
// checks that each code is unique and listed in openapi.yaml (components.schemas.ErrorCode).
// Messages are safe to show to clients; 5xx messages never carry internal detail.

// 4xx errors are expected outcomes on hot paths (401 on every request without a session):
// they skip the stack trace capture, which profiling showed was a third of the 401 path's CPU.
const define = (
  code: string,
  message: string,
  status: number
) => createError(code, message, status, Error, status >= 500)

export const Errors = {
  VALIDATION_FAILED: define('VALIDATION_FAILED', 'The request is not valid: %s', 400),
  WEBHOOK_URL_NOT_ALLOWED: define('WEBHOOK_URL_NOT_ALLOWED', 'The webhook URL is not allowed: %s', 400),
  INVALID_JSON: define('INVALID_JSON', 'The request body is not valid JSON', 400),
  TOKEN_INVALID: define('TOKEN_INVALID', 'This link is not valid. Ask for a new one.', 400),
  OAUTH_STATE_INVALID: define(
    'OAUTH_STATE_INVALID', 'The sign-in attempt could not be verified (%s). Start again.', 400
  ),
  UNAUTHENTICATED: define('UNAUTHENTICATED', 'Authentication required', 401),
  SIGNATURE_INVALID: define('SIGNATURE_INVALID', 'Request signature verification failed', 401),
  FORBIDDEN: define('FORBIDDEN', 'This operation requires the %s role', 403),
  SSO_SIGN_IN_REFUSED: define(
    'SSO_SIGN_IN_REFUSED', 'Single sign-on did not sign you in. Start again, or ask your workspace admin.', 403
  ),
  EMAIL_DOMAIN_NOT_ALLOWED: define('EMAIL_DOMAIN_NOT_ALLOWED', 'This link admits addresses at %s only', 403),
  INVITE_NOT_ALLOWED: define(
    'INVITE_NOT_ALLOWED', 'The invite policy of this workspace (%s) does not allow this: %s', 403
  ),
  INSUFFICIENT_SCOPE: define('INSUFFICIENT_SCOPE', 'This API key lacks the scope this operation needs: %s', 403),
  API_KEY_NOT_ALLOWED: define(
    'API_KEY_NOT_ALLOWED', "API keys cannot call this operation: it takes a person's session", 403
  ),
  CSRF_REJECTED: define(
    'CSRF_REJECTED', 'This request came from another site and was refused; send it from this service\'s own pages', 403
  ),
  NOT_FOUND: define('NOT_FOUND', '%s not found', 404),
  SSO_CONNECTION_NOT_FOUND: define(
    'SSO_CONNECTION_NOT_FOUND', 'No single sign-on connection serves this address. Sign in with an e-mailed link.', 404
  ),
  IDENTITY_PROVIDER_NOT_CONFIGURED: define(
    'IDENTITY_PROVIDER_NOT_CONFIGURED', 'Sign-in through an identity provider is not configured on this service', 404
  ),
  CHAT_PLATFORM_NOT_CONFIGURED: define(
    'CHAT_PLATFORM_NOT_CONFIGURED', 'The chat platform (Slack) is not configured on this service', 404
  ),
  METHOD_NOT_ALLOWED: define('METHOD_NOT_ALLOWED', 'Method %s is not allowed on %s', 405),
  NOT_ACCEPTABLE: define(
    'NOT_ACCEPTABLE', 'The Accept header does not allow any response this operation produces', 406
  ),
  USER_EXISTS: define('USER_EXISTS', 'A user with this e-mail already exists', 409),
  LAST_ADMIN: define('LAST_ADMIN', 'The last active admin of a workspace cannot be demoted, suspended or removed', 409),
  MEMBER_SUSPENDED: define(
    'MEMBER_SUSPENDED', 'This address belongs to a suspended member of the workspace; reactivate them instead', 409
  ),
  MANAGED_BY_DIRECTORY: define(
    'MANAGED_BY_DIRECTORY', 'The company directory deactivated this member: reactivate them in the directory', 403
  ),
  // A workspace requires sign-in by SSO for the address's domain (its connection's name): 403 as
  // EMAIL_DOMAIN_NOT_ALLOWED and MANAGED_BY_DIRECTORY, a door closed to this address by a policy,
  // which no change of state by the caller opens (409 is for a conflict with a resource's state).
  SSO_REQUIRED: define('SSO_REQUIRED', '%s signs you in with %s', 403),
  // SCIM (under /api/scim/v2, answered as SCIM errors with these scimTypes: src/scim/errors.ts).
  SCIM_INVALID_FILTER: define('SCIM_INVALID_FILTER', 'The filter is not valid: %s', 400),
  SCIM_INVALID_PATH: define('SCIM_INVALID_PATH', 'The PATCH path is not valid: %s', 400),
  SCIM_MUTABILITY: define('SCIM_MUTABILITY', 'This attribute cannot be changed: %s', 400),
  SCIM_UNIQUENESS: define('SCIM_UNIQUENESS', 'Another directory identity holds %s', 409),
  DOMAIN_NOT_ALLOWED: define('DOMAIN_NOT_ALLOWED', 'The domain cannot be added: %s', 400),
  DOMAIN_EXISTS: define('DOMAIN_EXISTS', 'The workspace has added %s already', 409),
  DOMAIN_CLAIMED: define('DOMAIN_CLAIMED', '%s is verified by another workspace', 409),
  DOMAIN_LIMIT_REACHED: define(
    'DOMAIN_LIMIT_REACHED', 'The workspace already has %s domains, the most it may hold; delete one first', 409
  ),
  SSO_DOMAIN_TAKEN: define(
    'SSO_DOMAIN_TAKEN', '%s is served by another SSO connection (%s); remove it there first', 409
  ),
  INVITATION_NOT_PENDING: define('INVITATION_NOT_PENDING', 'The invitation is %s, not pending', 409),
  INVITE_REQUEST_NOT_PENDING: define('INVITE_REQUEST_NOT_PENDING', 'The invite request is %s, not pending', 409),
  INVITE_REQUEST_LIMIT_REACHED: define(
    'INVITE_REQUEST_LIMIT_REACHED',
    'You already have %s pending invite requests, the most one member may have open; ' +
      'wait for the admins to decide one',
    409
  ),
  API_KEY_LIMIT_REACHED: define(
    'API_KEY_LIMIT_REACHED', 'The workspace already has %s live API keys, the most it may hold; revoke one first', 409
  ),
  WEBHOOK_ENDPOINT_DISABLED: define(
    'WEBHOOK_ENDPOINT_DISABLED', 'The webhook endpoint is disabled; enable it first', 409
  ),
  IDEMPOTENCY_KEY_IN_USE: define(
    'IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed', 409
  ),
  TOKEN_EXPIRED: define('TOKEN_EXPIRED', 'This link has expired. Ask for a new one.', 410),
  TOKEN_USED: define('TOKEN_USED', 'This link has already been used.', 410),
  SETUP_COMPLETE: define('SETUP_COMPLETE', 'This service is set up already: sign in instead.', 410),
  PAYLOAD_TOO_LARGE: define('PAYLOAD_TOO_LARGE', 'The request body is larger than %s bytes', 413),
  UNSUPPORTED_MEDIA_TYPE: define('UNSUPPORTED_MEDIA_TYPE', 'The request body must be application/json', 415),
  LOGO_TYPE_UNSUPPORTED: define(
    'LOGO_TYPE_UNSUPPORTED', 'Send a logo as image/png, image/jpeg or image/webp, not %s', 415
  ),
  LOGO_NOT_ACCEPTED: define('LOGO_NOT_ACCEPTED', '%s', 422),
  ACCENT_COLOR_CONTRAST_TOO_LOW: define(
    'ACCENT_COLOR_CONTRAST_TOO_LOW', '%s reaches %s against white; links and buttons need at least 4.5:1', 422
  ),
  IDEMPOTENCY_KEY_REUSED: define(
    'IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body', 422
  ),
  SSO_DOMAIN_NOT_VERIFIED: define(
    'SSO_DOMAIN_NOT_VERIFIED', 'The connection cannot serve %s: it is not a verified domain of this workspace', 422
  ),
  SSO_URL_NOT_ALLOWED: define('SSO_URL_NOT_ALLOWED', 'The address is not allowed: %s', 422),
  SSO_ISSUER_NOT_ALLOWED: define('SSO_ISSUER_NOT_ALLOWED', 'The issuer is not allowed: %s', 422),
  SSO_CERTIFICATE_INVALID: define('SSO_CERTIFICATE_INVALID', 'The certificate is not valid: %s %s', 422),
  SSO_METADATA_UNAVAILABLE: define('SSO_METADATA_UNAVAILABLE', 'The IdP metadata could not be read: %s', 422),
  RATE_LIMITED: define('RATE_LIMITED', 'Too many requests; retry in %s seconds', 429),
  INTERNAL_ERROR: define('INTERNAL_ERROR', 'Internal server error', 500),
  EMAIL_SEND_FAILED: define(
    'EMAIL_SEND_FAILED', 'Sending the e-mail failed. The invitation is kept; retry the request.', 500
  ),
  UPSTREAM_FAILED: define('UPSTREAM_FAILED', 'The %s did not answer as expected. Try again later.', 502),
  SERVICE_UNAVAILABLE: define('SERVICE_UNAVAILABLE', 'The service is unavailable: %s', 503)
} as const

export type ErrorCode = keyof typeof Errors

/** An error from the registry, possibly carrying `details` for the ErrorResponse. */
export interface ServiceError extends Error {
  code: ErrorCode
  statusCode: number
  details?: Record<string, unknown>
  /** Response headers that belong to this answer (Retry-After on RATE_LIMITED). */
  headers?: Record<string, string>
}

export function serviceError (code: ErrorCode, args: unknown[] = [], details?: Record<string, unknown>): ServiceError {
  const Ctor = Errors[code] as unknown as new (...a: unknown[]) => ServiceError
  const err = new Ctor(...args)
  if (details !== undefined) err.details = details
  return err
}

export function isServiceError (err: unknown): err is ServiceError {
  const code = (err as { code?: unknown } | null)?.code
  return err instanceof Error && typeof code === 'string' && Object.hasOwn(Errors, code)
}
