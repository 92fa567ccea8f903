import type { Role } from './db/users.js'
import { serviceError, type ServiceError } from './errors.js'

/** Who is calling, as established by a security handler; read by handlers and services. */
export interface Principal {
  /** session: a person's cookie; apiKey: an MCP client; chat: an admin acting through the Slack bot. */
  kind: 'session' | 'apiKey' | 'chat'
  userId: string
  workspaceId: string
  email: string
  name: string | null
  role: Role
  sessionId: string | null
  apiKeyId: string | null
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
