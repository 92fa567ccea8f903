import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { loginLinkBrowserCookie } from '../src/http/cookies.js'

// Thin: the invite-links service creates, lists, revokes, regenerates; and for visitors of a
// link, e-mails the confirmation and confirms (joining, or asking the admins).

type InviteLinkOperation = 'postInviteLinks' | 'getInviteLinks' | 'deleteInviteLinksLinkId' |
  'postInviteLinksLinkIdRegenerate' | 'postJoinCode' | 'postJoinCodeConfirmPreview' | 'postJoinCodeConfirm'

const JOIN_ACCEPTED = { message: 'A confirmation link is on its way to this address. It works once, for 24 hours.' }

/** A confirmation works for a day: the browser's binding lives as long. */
const JOIN_BROWSER_TTL_SECONDS = 24 * 3600

export function inviteLinkHandlers ({ services, config }: HandlerDeps): HandlerGroup<InviteLinkOperation> {
  const svc = services.inviteLinks
  // The confirmation is bound to the browser that asked (its page warns when another opens it).
  const browserCookie = loginLinkBrowserCookie(config, JOIN_BROWSER_TTL_SECONDS)
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
      await svc.requestJoin(request.params.code, {
        email: request.body.email, name: request.body.name, browser: browserCookie.ensure(request, reply)
      })
      return await reply.code(202).send(JOIN_ACCEPTED)
    },
    async postJoinCodeConfirmPreview (request) {
      return await svc.previewConfirmation(request.params.code, request.body.token, browserCookie.read(request))
    },
    async postJoinCodeConfirm (request, reply) {
      const outcome = await svc.confirm(request.params.code, request.body.token)
      if (outcome.kind === 'requested') return await reply.code(202).send({ message: outcome.message })
      return await reply.code(201).setSessionCookie(outcome.token).send(outcome.me)
    }
  }
}
