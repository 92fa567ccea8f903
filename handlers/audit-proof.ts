import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

/** The audit chain's proof: the service's public signing keys and a workspace's signed digests. */
export function auditProofHandlers (
  { services }: HandlerDeps
): HandlerGroup<'getAuditEventsSigningKeys' | 'getAuditEventsDigests'> {
  return {
    async getAuditEventsSigningKeys () {
      return await services.auditProof.signingKeys()
    },
    async getAuditEventsDigests (request) {
      const { since, until, limit, cursor } = request.query
      const { workspaceId } = principalOf(request)
      return await services.auditProof.digests(workspaceId, { since, until, limit: limit ?? 50, cursor })
    }
  }
}
