import type { FastifyRequest } from 'fastify'
import type { Principal } from '../principal.js'

/**
 * What the security plugin needs from the domain to check the contract's security schemes (glue
 * calls them by name). The authenticate functions resolve null only for a credential that is
 * really not valid now (unknown, expired, revoked); when the database does not answer they reject
 * with DatabaseUnavailableError, which the handlers let through: the answer is 503, never 401.
 */
export interface SecurityServices {
  authenticateSession(token: string): Promise<Principal | null>
  /** True when the token is one this service signed and has not expired (no database access). */
  sessionTokenVerifies(token: string): boolean
  authenticateApiKey(key: string): Promise<Principal | null>
  verifySlackSignature(request: FastifyRequest): void
}
