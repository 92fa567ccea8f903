import type { Role } from './db/users.js'
import type { Queryable } from './db/client.js'
import { findWorkspace } from './db/workspaces.js'
import { serviceError, type ServiceError } from './errors.js'

/** What an API key acting as a principal may do, and how audit rows and events name it. */
interface KeyGrant {
  name: string
  /** The contract's ApiKeyScope values the key holds. */
  scopes: readonly string[]
  /**
   * The door the key came through: a REST operation (`api`), the MCP endpoint (`mcp`), or SCIM
   * under /scim/v2 (`directory`).
   */
  door: 'api' | 'mcp' | 'directory'
}

/** Who is calling, as established by a security handler; read by handlers and services. */
export interface Principal {
  /** session: a person's cookie; apiKey: a script, a generated client or an MCP client; chat: the Slack bot. */
  kind: 'session' | 'apiKey' | 'chat'
  userId: string
  workspaceId: string
  email: string
  name: string | null
  role: Role
  sessionId: string | null
  apiKeyId: string | null
  /** Set when kind is apiKey: the key's name, scopes and door. */
  key?: KeyGrant
  /** The request (HTTP request id, or the chat event id) acting; events and audit rows name it. */
  requestId: string | null
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null
  }
}

/** The principal of a request that passed a security handler (glue guarantees it ran). */
export function principalOf (request: { principal: Principal | null }): Principal {
  if (request.principal === null) {
    throw new Error(
      'principalOf: no principal; is the operation missing its security requirement?'
    )
  }
  return request.principal
}

/**
 * The principal's workspace is gone (deleted after the request was authenticated): the caller is
 * signed in to nothing, 401 UNAUTHENTICATED, which every secured operation declares — never
 * NOT_FOUND, which names an operation's own resource. One rule for every service.
 */
export function workspaceGone (): ServiceError {
  return serviceError('UNAUTHENTICATED')
}

/**
 * The operation's own resource (`resource`, e.g. 'Invitation') is not in the caller's workspace:
 * NOT_FOUND — unless the workspace itself is gone (its rows went with it), then workspaceGone().
 * Every lookup by id that answers 404 throws this, so a deleted workspace is 401 everywhere.
 */
export async function notFoundIn (q: Queryable, workspaceId: string, resource: string): Promise<ServiceError> {
  return await findWorkspace(q, workspaceId) === null ? workspaceGone() : serviceError('NOT_FOUND', [resource])
}

/** The scopes of `required` that the principal lacks: none for people (their role decides). */
export function missingScopes (principal: Principal, required: readonly string[]): string[] {
  const held = principal.key?.scopes
  if (principal.kind !== 'apiKey' || held === undefined) return []
  return required.filter(s => !held.includes(s))
}

/** The realm of every Bearer challenge (RFC 6750 §3). */
export const BEARER_REALM = 'workspace-service'

/**
 * 403 INSUFFICIENT_SCOPE for a key that lacks some of `required`, with the RFC 6750 §3.1
 * challenge naming what is missing; nothing for people or a key holding them all. The one check
 * of scopes: the security plugin runs it with each operation's declared scopes, services with
 * `members:admin` where a request makes or unmakes an admin, MCP tools with their operation's.
 */
export function requireScopes (principal: Principal, required: readonly string[]): void {
  const missing = missingScopes(principal, required)
  if (missing.length === 0) return
  const err = serviceError(
    'INSUFFICIENT_SCOPE', [missing.join(' ')], { requiredScopes: [...required], missingScopes: missing }
  )
  err.headers = {
    'www-authenticate': `Bearer realm="${BEARER_REALM}", error="insufficient_scope", scope="${missing.join(' ')}"`
  }
  throw err
}

/** `requireScopes` for `members:admin`: what anything that makes or unmakes an admin needs besides its own scope. */
export function requireAdminScope (principal: Principal): void {
  requireScopes(principal, ['members:admin'])
}
