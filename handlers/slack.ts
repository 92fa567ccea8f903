import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { serviceError } from '../src/errors.js'
import { oauthStateCookie } from '../src/http/cookies.js'
import { OAUTH_STATE_TTL_MS } from '../src/oauth/state.js'

export function slackHandlers (
  { services, config }: HandlerDeps
): HandlerGroup<
  'getOauthSlackInstall' | 'getOauthSlackCallback' | 'postSlackEvents' | 'postSlackCommands' | 'postSlackInteractions'
> {
  const { slack } = services
  // The state cookie is scoped to the Slack OAuth paths.
  const stateCookie = oauthStateCookie(config, {
    name: 'slack_oauth_state', path: '/api/oauth/slack', maxAgeSeconds: OAUTH_STATE_TTL_MS / 1000
  })
  return {
    async getOauthSlackInstall (request, reply) {
      const { location, state } = await slack.startInstall(principalOf(request))
      stateCookie.set(reply, state)
      return await reply.redirect(location, 302)
    },

    async getOauthSlackCallback (request, reply) {
      const q = request.query
      await slack.completeInstall({
        cookieState: stateCookie.take(request, reply),
        queryState: q.state,
        code: q.code,
        error: q.error
      })
      return await reply.redirect(config.appUrl, 302)
    },

    async postSlackEvents (request) {
      const body = request.body
      if (body.type === 'url_verification') {
        if (typeof body.challenge !== 'string') {
          throw serviceError(
            'VALIDATION_FAILED', ['url_verification needs a challenge'],
            { errors: [{ in: 'body', field: 'challenge', message: 'is required for url_verification' }] }
          )
        }
        return { challenge: body.challenge }
      }
      if (body.type === 'event_callback') {
        const retry = request.headers['x-slack-retry-num' as keyof typeof request.headers]
        await slack.receive(body, { retryNum: typeof retry === 'string' ? retry : undefined })
      }
      // Other envelope types (app_rate_limited, ...) need nothing but the acknowledgement.
      return { ok: true }
    },

    async postSlackCommands (request) {
      return await slack.command(request.body)
    },

    async postSlackInteractions (request) {
      return await slack.interaction(request.body.payload)
    }
  }
}
