import type { HandlerDeps, HandlerGroup } from './types.js'
import { oauthStateCookie, requestCookie, samlStateCookie } from '../src/http/cookies.js'
import { serviceError } from '../src/errors.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { SSO_FLOW_TTL_MS } from '../src/sso/sign-in-flow.js'
import type { SsoOutcome } from '../src/sso/sign-in.js'
import type { FastifyReply } from 'fastify'

// Sign-in through a workspace's SSO connection: the start (by address, or an admin's test), the
// OpenID Connect callback, and SAML's metadata and ACS. The OIDC state cookie is SameSite=Lax on
// the callback's path (the provider's redirect back is a top-level GET); SAML's is
// samlStateCookie's (src/http/cookies.ts says why).
const OIDC_STATE_COOKIE = { name: 'sso_state', path: '/api/oauth/sso/callback', maxAgeSeconds: SSO_FLOW_TTL_MS / 1000 }

export function ssoSignInHandlers ({ services, config }: HandlerDeps): HandlerGroup<
  'getOauthSso' | 'getOauthSsoCallback' | 'getSsoConnectionsConnectionIdSamlMetadata' |
  'postSsoConnectionsConnectionIdSamlAcs'
> {
  const { ssoSignIn } = services
  const oidcState = oauthStateCookie(config, OIDC_STATE_COOKIE)
  const answer = async (reply: FastifyReply, outcome: SsoOutcome) => {
    reply.header('cache-control', 'no-store')
    if (outcome.kind === 'test') return outcome.result
    if (outcome.kind === 'restart') {
      samlStateCookie(outcome.start.connectionId, SSO_FLOW_TTL_MS / 1000).set(reply, outcome.start.state)
      return await reply.redirect(outcome.start.url, 302)
    }
    return await reply.setSessionCookie(outcome.token).redirect(`${config.appUrl}/`, 302)
  }
  return {
    async getOauthSso (request, reply) {
      const { email, connection } = request.query
      const start = connection !== undefined
        ? await ssoSignIn.startTest(requestCookie(request, SESSION_COOKIE), connection)
        : email !== undefined
          ? await ssoSignIn.startByEmail(email)
          : null
      if (start === null) {
        throw serviceError('VALIDATION_FAILED', ['query.email is required'], {
          errors: [{ in: 'query', field: 'email', message: 'is required' }]
        })
      }
      if (start.protocol === 'oidc') oidcState.set(reply, start.state)
      else samlStateCookie(start.connectionId, SSO_FLOW_TTL_MS / 1000).set(reply, start.state)
      return await reply.header('cache-control', 'no-store').redirect(start.url, 302)
    },

    async getOauthSsoCallback (request, reply) {
      const outcome = await ssoSignIn.finishOidc({
        cookieState: oidcState.take(request, reply),
        state: request.query.state,
        callbackUrl: request.url
      })
      return await answer(reply, outcome)
    },

    async getSsoConnectionsConnectionIdSamlMetadata (request, reply) {
      const xml = await ssoSignIn.samlMetadata(request.params.connectionId)
      return await reply.type('application/samlmetadata+xml').code(200).send(xml)
    },

    async postSsoConnectionsConnectionIdSamlAcs (request, reply) {
      const { connectionId } = request.params
      const outcome = await ssoSignIn.finishSaml(connectionId, {
        cookieState: samlStateCookie(connectionId, 0).take(request, reply),
        samlResponse: request.body.SAMLResponse,
        relayState: request.body.RelayState
      })
      return await answer(reply, outcome)
    }
  }
}
