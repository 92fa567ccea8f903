import type { Handler, HandlerDeps, HandlerGroup } from './types.js'
import { oauthStateCookie, requestCookie, samlStateCookie } from '../src/http/cookies.js'
import { serviceError } from '../src/errors.js'
import { SESSION_COOKIE } from '../src/sessions/service.js'
import { SSO_FLOW_TTL_MS } from '../src/sso/sign-in-flow.js'
import type { SsoOutcome } from '../src/sso/sign-in.js'
import { refusalPage, testSignInPage } from '../src/sso/pages.js'
import { prefersHtml } from '../src/http/accept.js'
import type { Page } from '../src/http/page-shell.js'
import { negotiateLocale } from '../src/i18n/negotiate.js'
import type { Locale } from '../src/i18n/locales.js'
import { loggedServiceError } from '../src/error-response.js'
import type { FastifyReply, FastifyRequest } from 'fastify'

// Sign-in through a workspace's SSO connection: the start (by address, or an admin's test), the
// OpenID Connect callback, and SAML's metadata and ACS. The OIDC state cookie is SameSite=Lax on
// the callback's path (the provider's redirect back is a top-level GET); SAML's is
// samlStateCookie's (src/http/cookies.ts says why).
const OIDC_STATE_COOKIE = { name: 'sso_state', path: '/api/oauth/sso/callback', maxAgeSeconds: SSO_FLOW_TTL_MS / 1000 }

async function sendPage (reply: FastifyReply, status: number, page: Page): Promise<FastifyReply> {
  return await reply.headers(page.headers).header('vary', 'Accept, Accept-Language').type('text/html; charset=utf-8')
    .code(status).send(page.html)
}

/** The browser's language (these pages know no link's or workspace's): Accept-Language, else English. */
function lookOf (request: FastifyRequest): { locale: Locale } {
  return { locale: negotiateLocale({ acceptLanguage: request.headers['accept-language'] }) }
}

/**
 * These operations end in a person's browser (the provider's redirect, the IdP's form, /login's
 * navigation): its navigation (Accept prefers text/html) gets an answer that signs no one in as a
 * page in words with the same status; every other client the JSON of the one error handler.
 */
async function inWords<T> (
  request: FastifyRequest, reply: FastifyReply, body: () => Promise<T>
): Promise<T | FastifyReply> {
  try {
    return await body()
  } catch (err) {
    if (!prefersHtml(request.headers.accept)) throw err
    // Logged as the one error handler logs what it answers; an internal error's page says nothing of it.
    const error = loggedServiceError(err, request.log)
    if (error.headers !== undefined) reply.headers(error.headers)
    const reason = typeof error.details?.reason === 'string' ? error.details.reason : undefined
    const view = { status: error.statusCode, code: error.code, reason }
    return await sendPage(reply, error.statusCode, refusalPage(view, lookOf(request)))
  }
}

export function ssoSignInHandlers ({ services, config }: HandlerDeps): HandlerGroup<
  'getOauthSso' | 'getOauthSsoCallback' | 'getSsoConnectionsConnectionIdSamlMetadata' |
  'postSsoConnectionsConnectionIdSamlAcs'
> {
  const { ssoSignIn } = services
  const oidcState = oauthStateCookie(config, OIDC_STATE_COOKIE)
  const answer = async (request: FastifyRequest, reply: FastifyReply, outcome: SsoOutcome) => {
    reply.header('cache-control', 'no-store')
    if (outcome.kind === 'test') {
      if (!prefersHtml(request.headers.accept)) return outcome.result
      return await sendPage(reply, 200, testSignInPage(outcome.result, lookOf(request)))
    }
    if (outcome.kind === 'restart') {
      samlStateCookie(outcome.start.connectionId, SSO_FLOW_TTL_MS / 1000).set(reply, outcome.start.state)
      return await reply.redirect(outcome.start.url, 302)
    }
    return await reply.setSessionCookie(outcome.token).redirect(`${config.appUrl}/`, 302)
  }
  const start = async (request: Parameters<Handler<'getOauthSso'>>[0], reply: FastifyReply) => {
    const { email, connection } = request.query
    const begun = connection !== undefined
      ? await ssoSignIn.startTest(requestCookie(request, SESSION_COOKIE), connection)
      : email !== undefined
        ? await ssoSignIn.startByEmail(email)
        : null
    if (begun === null) {
      throw serviceError('VALIDATION_FAILED', ['query.email is required'], {
        errors: [{ in: 'query', field: 'email', message: 'is required' }]
      })
    }
    if (begun.protocol === 'oidc') oidcState.set(reply, begun.state)
    else samlStateCookie(begun.connectionId, SSO_FLOW_TTL_MS / 1000).set(reply, begun.state)
    return await reply.header('cache-control', 'no-store').redirect(begun.url, 302)
  }
  return {
    async getOauthSso (request, reply) {
      return await inWords(request, reply, async () => await start(request, reply))
    },

    async getOauthSsoCallback (request, reply) {
      return await inWords(request, reply, async () => {
        const outcome = await ssoSignIn.finishOidc({
          cookieState: oidcState.take(request, reply),
          state: request.query.state,
          callbackUrl: request.url
        })
        return await answer(request, reply, outcome)
      })
    },

    async getSsoConnectionsConnectionIdSamlMetadata (request, reply) {
      const xml = await ssoSignIn.samlMetadata(request.params.connectionId)
      return await reply.type('application/samlmetadata+xml').code(200).send(xml)
    },

    async postSsoConnectionsConnectionIdSamlAcs (request, reply) {
      const { connectionId } = request.params
      return await inWords(request, reply, async () => {
        const outcome = await ssoSignIn.finishSaml(connectionId, {
          cookieState: samlStateCookie(connectionId, 0).take(request, reply),
          samlResponse: request.body.SAMLResponse,
          relayState: request.body.RelayState
        })
        return await answer(request, reply, outcome)
      })
    }
  }
}
