import type { FastifyReply } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import { OAUTH_STATE_COOKIE, OAUTH_STATE_TTL_MS } from '../src/idp/login.js'
import { browserCookie } from '../src/plugins/auth.js'

// Identity-provider (WorkOS AuthKit) login. The Slack install operations live in handlers/slack.ts.
// The state cookie is scoped to the callback path and lives as long as the state row.
const STATE_COOKIE_PATH = '/api/oauth/callback'

export function oauthHandlers ({ services, config }: HandlerDeps): HandlerGroup<'getOauthLogin' | 'getOauthCallback'> {
  const idp = services.auth.identityProvider
  const stateCookie = (reply: FastifyReply) => browserCookie(config, reply, STATE_COOKIE_PATH)
  return {
    async getOauthLogin (_request, reply) {
      const { url, state } = await idp.start()
      reply.setCookie(OAUTH_STATE_COOKIE, state, { ...stateCookie(reply), maxAge: OAUTH_STATE_TTL_MS / 1000 })
      return await reply.header('cache-control', 'no-store').redirect(url, 302)
    },

    async getOauthCallback (request, reply) {
      // Single use whatever happens next: the cookie is cleared on success and on every error.
      reply.clearCookie(OAUTH_STATE_COOKIE, stateCookie(reply))
      const { token } = await idp.complete({ cookieState: request.cookies[OAUTH_STATE_COOKIE], query: request.query })
      return await reply.setSessionCookie(token).header('cache-control', 'no-store').redirect(`${config.appUrl}/`, 302)
    }
  }
}
