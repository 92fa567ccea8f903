import type { HandlerDeps, HandlerGroup } from './types.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { loginLinkBrowserCookie, requestCookie } from '../src/http/cookies.js'
import { LOGIN_TOKEN_TTL_MS } from '../src/auth/login-link.js'

// The contract's 202 body for login links: one constant, so every answer is byte-identical.
const LOGIN_LINK_ACCEPTED = {
  message: 'If this address belongs to an account, a sign-in link is on its way. It works once, for 15 minutes.'
}

export function authHandlers (
  { services, config }: HandlerDeps
): HandlerGroup<
  'postSetup' | 'postAuthSignup' | 'postAuthInvitation' | 'postAuthLoginLink' | 'postAuthLoginLinkPreview' |
  'postAuthVerify' | 'postAuthLogout'
> {
  const { auth, setup } = services
  const browserCookie = loginLinkBrowserCookie(config, LOGIN_TOKEN_TTL_MS / 1000)
  return {
    async postSetup (request, reply) {
      const { me, token } = await setup.complete(request.body)
      return await reply.code(201).setSessionCookie(token).send(me)
    },

    async postAuthSignup (request, reply) {
      const { me, token } = await auth.signup({ token: request.body.token, name: request.body.name })
      return await reply.code(201).setSessionCookie(token).send(me)
    },

    async postAuthInvitation (request) {
      return await auth.previewInvitation(request.body.token)
    },

    async postAuthLoginLink (request, reply) {
      // Only the address's domain is looked up before answering (SSO_REQUIRED); the delivery runs
      // after the reply (login-link.ts). The link is bound to this browser: its landing page can
      // tell whether it was opened here.
      const atSsoDomain = request.body.breakGlass === true ? 'admins' : 'refuse'
      await auth.requestLoginLink(request.body.email, browserCookie.ensure(request, reply), atSsoDomain)
      return await reply.code(202).send(LOGIN_LINK_ACCEPTED)
    },

    async postAuthLoginLinkPreview (request) {
      return await auth.previewLoginLink(request.body.token, browserCookie.read(request))
    },

    async postAuthVerify (request, reply) {
      const { me, token } = await auth.verifyLoginLink(request.body.token)
      return await reply.setSessionCookie(token).code(200).send(me)
    },

    async postAuthLogout (request, reply) {
      await auth.logout(requestCookie(request, SESSION_COOKIE))
      return await reply.clearSessionCookie().code(204).send()
    }
  }
}
