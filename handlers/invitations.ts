import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { idempotencyKeyOf } from '../src/idempotency/idempotency.js'
import { SMALL_BATCH } from '../src/invitations/service.js'

// Thin: read the request, call the invitation service, answer. The Idempotency-Key header is
// validated by the contract (1–255 characters) before it gets here; its operation is the route's.

type InvitationOperation =
  'postUsersInvite' | 'getInvitations' | 'getInvitationsFunnel' | 'postInvitationsInvitationIdResend' |
  'deleteInvitationsInvitationId' | 'postInvitationsBatch' | 'getInvitationBatchesBatchId'

export function invitationHandlers ({ services }: HandlerDeps): HandlerGroup<InvitationOperation> {
  const svc = services.invitations
  return {
    async postUsersInvite (request) {
      const idempotency = idempotencyKeyOf(request)
      return await svc.invite(principalOf(request), request.body, idempotency !== undefined ? { idempotency } : {})
    },
    async getInvitations (request) {
      const { status, limit, cursor } = request.query
      return await svc.list(principalOf(request), {
        limit: limit ?? 50,
        ...(status !== undefined ? { status } : {}),
        ...(cursor !== undefined ? { cursor } : {})
      })
    },
    async getInvitationsFunnel (request) {
      return await svc.funnel(principalOf(request), request.query)
    },
    async postInvitationsInvitationIdResend (request) {
      return await svc.resend(principalOf(request), request.params.invitationId)
    },
    async deleteInvitationsInvitationId (request) {
      return await svc.revoke(principalOf(request), request.params.invitationId)
    },
    async postInvitationsBatch (request, reply) {
      const idempotency = idempotencyKeyOf(request)
      const batch = await svc.inviteMany(
        principalOf(request), request.body, idempotency !== undefined ? { idempotency } : {}
      )
      // The size decides the status, so a replayed answer has the status of the first.
      if (batch.total <= SMALL_BATCH) return await reply.code(201).send(batch)
      return await reply.header('location', `/api/invitation-batches/${batch.id}`).code(202).send(batch)
    },
    async getInvitationBatchesBatchId (request) {
      const { limit, cursor } = request.query
      return await svc.batch(principalOf(request), request.params.batchId, {
        limit: limit ?? 50,
        ...(cursor !== undefined ? { cursor } : {})
      })
    }
  }
}
