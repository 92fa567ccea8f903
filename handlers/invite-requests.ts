import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

// Thin: the invite-requests service decides, audits and tells Slack.

export function inviteRequestHandlers (
  { services }: HandlerDeps
): HandlerGroup<'getInviteRequests' | 'postInviteRequestsRequestIdApprove' | 'postInviteRequestsRequestIdDeny'> {
  const svc = services.inviteRequests
  return {
    async getInviteRequests (request) {
      const { status, limit, cursor } = request.query
      return await svc.list(principalOf(request), {
        limit: limit ?? 50,
        ...(status !== undefined ? { status } : {}),
        ...(cursor !== undefined ? { cursor } : {})
      })
    },
    async postInviteRequestsRequestIdApprove (request) {
      const role = request.body?.role
      return await svc.approve(principalOf(request), request.params.requestId, role !== undefined ? { role } : {})
    },
    async postInviteRequestsRequestIdDeny (request) {
      const reason = request.body?.reason
      return await svc.deny(principalOf(request), request.params.requestId, reason !== undefined ? { reason } : {})
    }
  }
}
