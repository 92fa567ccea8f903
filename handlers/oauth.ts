import type { HandlerDeps, HandlerGroup } from './types.js'
import { oauthStateCookie } from '../src/http/cookies.js'
import { OAUTH_STATE_TTL_MS } from '../src/oauth/state.js'

// Identity-provider (WorkOS AuthKit) login. The Slack install operations live in handlers/slack.ts.
// The state cookie is scoped to the callback path and lives as long as the state row.
const STATE_COOKIE = { name: 'oauth_state', path: '/api/oauth/callback', maxAgeSeconds: OAUTH_STATE_TTL_MS / 1000 }

export function oauthHandlers ({ services, config }: HandlerDeps): HandlerGroup<'getOauthLogin' | 'getOauthCallback'> {
  const idp = services.auth.identityProvider
  const stateCookie = oauthStateCookie(config, STATE_COOKIE)
  return {
    async getOauthLogin (_request, reply) {
      const { url, state } = await idp.start()
      stateCookie.set(reply, state)
      return await reply.header('cache-control', 'no-store').redirect(url, 302)
    },

    async getOauthCallback (request, reply) {
      const { token } = await idp.complete({ cookieState: stateCookie.take(request, reply), query: request.query })
      return await reply.setSessionCookie(token).header('cache-control', 'no-store').redirect(`${config.appUrl}/`, 302)
    }
  }
}
