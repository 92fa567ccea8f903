import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

// Thin: the invite-requests service decides, audits and tells Slack.

type InviteRequestOperation = 'getInviteRequests' | 'postInviteRequests' | 'getInviteRequestsMine' |
  'postInviteRequestsRequestIdApprove' | 'postInviteRequestsRequestIdDeny'

export function inviteRequestHandlers ({ services }: HandlerDeps): HandlerGroup<InviteRequestOperation> {
  const svc = services.inviteRequests
  const page = (q: { status?: 'pending' | 'approved' | 'denied' | 'expired', limit?: number, cursor?: string }) => ({
    limit: q.limit ?? 50,
    ...(q.status !== undefined ? { status: q.status } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {})
  })
  return {
    async getInviteRequests (request) {
      return await svc.list(principalOf(request), page(request.query))
    },
    async postInviteRequests (request, reply) {
      const { row, created } = await svc.request(principalOf(request), request.body)
      return await reply.code(created ? 201 : 200).send(svc.toView(row))
    },
    async getInviteRequestsMine (request) {
      return await svc.list(principalOf(request), { ...page(request.query), mine: true })
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
