import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

// Thin: the invite-links service creates, lists, revokes, regenerates; and for visitors of a
// link, e-mails the confirmation and confirms (joining, or asking the admins).

type InviteLinkOperation = 'postInviteLinks' | 'getInviteLinks' | 'deleteInviteLinksLinkId' |
  'postInviteLinksLinkIdRegenerate' | 'postJoinCode' | 'postJoinCodeConfirm'

const JOIN_ACCEPTED = { message: 'A confirmation link is on its way to this address. It works once, for 24 hours.' }

export function inviteLinkHandlers ({ services }: HandlerDeps): HandlerGroup<InviteLinkOperation> {
  const svc = services.inviteLinks
  return {
    async postInviteLinks (request, reply) {
      const created = await svc.create(principalOf(request), request.body)
      // The URL is in this one answer only; keep it out of any shared cache.
      return await reply.header('cache-control', 'no-store').code(201).send(created)
    },
    async getInviteLinks (request) {
      const { limit, cursor } = request.query
      return await svc.list(principalOf(request), { limit: limit ?? 50, ...(cursor !== undefined ? { cursor } : {}) })
    },
    async deleteInviteLinksLinkId (request) {
      return await svc.revoke(principalOf(request), request.params.linkId)
    },
    async postInviteLinksLinkIdRegenerate (request, reply) {
      const created = await svc.regenerate(principalOf(request), request.params.linkId)
      return await reply.header('cache-control', 'no-store').code(200).send(created)
    },
    async postJoinCode (request, reply) {
      await svc.requestJoin(request.params.code, { email: request.body.email, name: request.body.name })
      return await reply.code(202).send(JOIN_ACCEPTED)
    },
    async postJoinCodeConfirm (request, reply) {
      const outcome = await svc.confirm(request.params.code, request.body.token)
      if (outcome.kind === 'requested') return await reply.code(202).send({ message: outcome.message })
      return await reply.code(201).setSessionCookie(outcome.token).send(outcome.me)
    }
  }
}
