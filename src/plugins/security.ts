import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import { isServiceError, serviceError } from '../errors.js'
import { BEARER_REALM } from '../principal.js'
import { createSecurityHandlers, createSessionPrecheck } from './auth.js'
import { createCrossOriginCheck, isUnsafeMethod } from './cross-origin.js'
import { literalSegmentGuard } from './literal-segments.js'
import type { RateLimitPolicy } from './rate-limit.js'

// Each operation's hooks, built from the contract when glue creates its route (glue's documented
// `operationResolver`: what it returns is the route's options). The order of checks, as
// openapi.yaml's info.description promises:
//  - sessionCookie-only operations check in two steps: the token (present, signed by us, not
//    expired) in onRequest, before the body is read, so a caller without a session gets 401 (not
//    400/413/415) and costs no parsing; the session row and the role (401 revoked, 403 not
//    admin) in preHandler, after validation, so a malformed request costs no database round trip.
//  - a request that presents an API key (`Authorization: Bearer …`) to an operation open to keys is
//    authenticated by the key alone (a cookie beside it is not read), fully in onRequest, before
//    the rate-limit hook, so every request with a key counts against that key's limit, valid or
//    not; the key must hold the scopes the operation's `apiKey` requirement names (403
//    INSUFFICIENT_SCOPE). An operation marked `x-api-key: never` refuses any request presenting a
//    key (403 API_KEY_NOT_ALLOWED) before anything else. A 401 of an operation open to keys
//    carries the Bearer challenge (RFC 6750 §3).
//  - operations whose security needs the raw body (Slack's signature) say `authAfterBody: true`
//    in x-fastify-config and check in preHandler.
// Before all of these, an unsafe method (POST, PUT, PATCH, DELETE) that the session cookie can
// authorize, or that is public (the sign-in, sign-up, setup and sign-out operations set or clear
// that cookie), passes the cross-origin check (cross-origin.ts): one hook, for every such
// operation the contract lists. Operations only an API key or Slack's signature can authorize
// are not checked: no browser attaches those by itself.
// Then the operation's rate-limit policy (x-fastify-config.rateLimit), see rate-limit.ts.

type Hook = (request: FastifyRequest, reply: FastifyReply) => Promise<void>
type SchemeHandler = (request: FastifyRequest, reply: FastifyReply, scopes: string[]) => Promise<void>
/** One alternative of an operation's `security`: every scheme in it must pass. */
type Requirement = Array<[scheme: string, scopes: string[]]>

interface OperationConfig {
  authAfterBody?: boolean,
  bodyOptional?: boolean,
  /** The media types the operation's request body may have (body-parsing.ts reads SCIM's). */
  bodyTypes?: string[],
  [key: string]: unknown
}
interface ContractOperation {
  security?: Array<Record<string, string[]>>,
  /** `never`: the operation refuses API keys (sign-in flows, key management, callbacks). */
  'x-api-key'?: 'never',
  requestBody?: { required?: boolean, content?: Record<string, unknown> },
  'x-fastify-config'?: OperationConfig & {
    rateLimit?: RateLimitPolicy | false,
    /** The operation's own body limit in bytes, above BODY_LIMIT_BYTES (the invitation batch's 1,000 rows). */
    bodyLimit?: number
  }
}

/** What glue's operationResolver adds to a route, besides the handler. */
type OperationRoute = Pick<RouteShorthandOptions, 'onRequest' | 'preHandler' | 'bodyLimit'> & {
  config: OperationConfig
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The hooks and config of the operation at `METHOD /openapi/{path}`. */
    operationRoute(method: string, openapiPath: string): OperationRoute
  }
}

/** The failure to answer when no alternative passed: an outage (5xx) first, then 403, then the first. */
function mostSpecific (errors: unknown[]): unknown {
  const status = (e: unknown) => isServiceError(e) ? e.statusCode : 500
  return errors.find(e => status(e) >= 500) ?? errors.find(e => status(e) === 403) ?? errors[0]
}

/** Whether the request presents an API key: an Authorization header of the Bearer scheme. */
function presentsKey (request: FastifyRequest): boolean {
  const header = request.headers.authorization
  return header !== undefined && /^bearer(?:\s|$)/i.test(header)
}

async function refuseKey (request: FastifyRequest): Promise<void> {
  if (presentsKey(request)) throw serviceError('API_KEY_NOT_ALLOWED')
}

/** A 401 of an operation open to keys says how to authenticate (RFC 6750 §3): the Bearer challenge. */
function withBearerChallenge (hook: Hook): Hook {
  return async function challenge (request, reply) {
    try {
      await hook(request, reply)
    } catch (err) {
      if (isServiceError(err) && err.statusCode === 401) {
        err.headers = {
          ...err.headers,
          'www-authenticate': presentsKey(request)
            ? `Bearer realm="${BEARER_REALM}", error="invalid_token"`
            : `Bearer realm="${BEARER_REALM}"`
        }
      }
      throw err
    }
  }
}

function requirementHook (alternatives: Requirement[], handlers: Record<string, SchemeHandler>): Hook {
  for (const [scheme] of alternatives.flat()) {
    if (handlers[scheme] === undefined) throw new Error(`no handler for the contract's security scheme "${scheme}"`)
  }
  return async function authenticate (request, reply) {
    const errors: unknown[] = []
    for (const requirement of alternatives) {
      try {
        for (const [scheme, scopes] of requirement) await (handlers[scheme] as SchemeHandler)(request, reply, scopes)
        return
      } catch (err) {
        errors.push(err)
      }
    }
    throw mostSpecific(errors)
  }
}

/** Each operation's security from the contract (fastify.contract), checked by the services' doors. */
async function securityPlugin (fastify: FastifyInstance): Promise<void> {
  const { contract, config } = fastify
  const { security } = fastify.services
  const handlers = createSecurityHandlers(security, fastify.bearerFailures) as Record<string, SchemeHandler>
  const sessionPrecheck = createSessionPrecheck(security)
  const crossOriginCheck = createCrossOriginCheck(config.publicUrl)
  const paths = (contract.paths ?? {}) as Record<string, Record<string, ContractOperation>>
  const global = (contract.security ?? []) as Array<Record<string, string[]>>

  fastify.decorate('operationRoute', (method: string, openapiPath: string): OperationRoute => {
    const op = paths[openapiPath]?.[method.toLowerCase()] ?? {}
    // A copy: the route's config must not be shared with the contract object.
    const { rateLimit, bodyLimit, ...config } = op['x-fastify-config'] ?? {}
    const alternatives: Requirement[] = (op.security ?? global).map(req => Object.entries(req))
    const onRequest: Hook[] = []
    const preHandler: Hook[] = []
    // First: a literal segment of another path in a parameter's place is no route of this one.
    const literalGuard = literalSegmentGuard(Object.keys(paths), openapiPath)
    if (literalGuard !== null) onRequest.push(literalGuard)
    const browserCanSend = alternatives.length === 0 ||
      alternatives.some(r => r.length === 0 || r.some(([scheme]) => scheme === 'sessionCookie'))
    if (op['x-api-key'] === 'never') onRequest.push(refuseKey)
    // `crossSitePost`: a public operation another site's page posts by design (SAML's ACS, which
    // the IdP's page posts): it acts on no session cookie, and what it takes is signed elsewhere.
    if (isUnsafeMethod(method.toUpperCase()) && browserCanSend && config.crossSitePost !== true) {
      onRequest.push(crossOriginCheck)
    }
    if (alternatives.length > 0 && alternatives.every(r => r.length > 0)) {
      const byKey = alternatives.filter(r => r.some(([scheme]) => scheme === 'apiKey'))
      const others = alternatives.filter(r => !r.some(([scheme]) => scheme === 'apiKey'))
      const authenticate = others.length > 0 ? requirementHook(others, handlers) : null
      const sessionOnly = others.length > 0 && others.every(r => r.length === 1 && r[0]?.[0] === 'sessionCookie')
      if (config.authAfterBody === true) {
        if (authenticate !== null) preHandler.push(authenticate)
      } else if (byKey.length === 0) {
        if (sessionOnly) onRequest.push(sessionPrecheck)
        if (authenticate !== null) (sessionOnly ? preHandler : onRequest).push(authenticate)
      } else {
        // Open to keys: a request presenting one is the key's alone; without one, the other doors.
        const keyHook = requirementHook(byKey, handlers)
        onRequest.push(withBearerChallenge(async (request, reply) => {
          if (authenticate === null || presentsKey(request)) return await keyHook(request, reply)
          return sessionOnly ? await sessionPrecheck(request) : await authenticate(request, reply)
        }))
        if (sessionOnly && authenticate !== null) {
          preHandler.push(withBearerChallenge(async (request, reply) => {
            if (request.principal === null) await authenticate(request, reply)
          }))
        }
      }
    }
    const route: OperationRoute = { config }
    if (bodyLimit !== undefined) route.bodyLimit = bodyLimit
    // A request body the contract marks optional (requestBody.required is false by default) may be
    // left out: body-parsing.ts requires a body only of the operations that do not say this.
    if (op.requestBody !== undefined && op.requestBody.required !== true) route.config.bodyOptional = true
    if (op.requestBody?.content !== undefined) route.config.bodyTypes = Object.keys(op.requestBody.content)
    if (rateLimit !== undefined && rateLimit !== false) {
      const limited = fastify.rateLimitedRoute(rateLimit)
      route.config.rateLimit = limited.rateLimit
      if (limited.preHandler !== undefined) preHandler.push(limited.preHandler)
    }
    // Fresh arrays per route: @fastify/rate-limit appends its onRequest hook to them.
    if (onRequest.length > 0) route.onRequest = onRequest
    if (preHandler.length > 0) route.preHandler = preHandler
    return route
  })
}

export default fp(securityPlugin, {
  name: 'security', fastify: '5.x', dependencies: ['auth-tokens', 'rate-limit', 'services']
})
