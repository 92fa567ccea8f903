import fp from 'fastify-plugin'
import cookie from '@fastify/cookie'
import jwt from '@fastify/jwt'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { systemClock, type Clock } from '../clock.js'
import { serviceError } from '../errors.js'
import { SESSION_COOKIE } from '../sessions/service.js'
import type { SessionTokenSigner } from '../ports/session-token-signer.js'
import type { SecurityServices } from '../auth/security.js'
import type { BearerFailures } from './rate-limit.js'
import { browserCookie, requestCookie } from '../http/cookies.js'
import { requireScopes } from '../principal.js'

// Session tokens: @fastify/jwt pinned to HS256 (it accepts every algorithm unless told), with
// exp, iss and aud required on verify. Only the service_session cookie is ever read. A numeric
// expiresIn is in seconds (as the JWT's iat and exp are), so exp - iat is the session lifetime.
export const JWT_AUDIENCE = 'workspace-service'

declare module 'fastify' {
  interface FastifyInstance {
    sessionSigner: SessionTokenSigner
  }
  interface FastifyReply {
    setSessionCookie(token: string): this
    clearSessionCookie(): this
  }
}

/** @fastify/jwt's options for session tokens (also the benchmark's hand-written baseline's). */
export function sessionJwtOptions (config: Config) {
  return {
    secret: config.session.secret,
    sign: {
      algorithm: 'HS256' as const, iss: config.publicUrl, aud: JWT_AUDIENCE, expiresIn: config.session.ttlSeconds
    },
    verify: {
      algorithms: ['HS256' as const],
      allowedIss: config.publicUrl,
      allowedAud: JWT_AUDIENCE,
      requiredClaims: ['exp', 'iss', 'aud', 'sid'],
      cache: true
    }
  }
}

async function authTokensPlugin (fastify: FastifyInstance, opts: { config: Config, clock?: Clock }): Promise<void> {
  const { config } = opts
  // No hook: cookies are parsed when first read (requestCookie, src/http/cookies.ts).
  await fastify.register(cookie, { hook: false })
  await fastify.register(jwt, sessionJwtOptions(config))
  // iat and exp are read on the app's clock, as the session row's expiry is. fast-jwt fixes a
  // signer's or verifier's clock when it is made: the real clock keeps @fastify/jwt's shared
  // (cached) ones; another clock (tests, a data folder served at the time it was made) is asked
  // on each call, with a verifier made for that call.
  const clock = opts.clock ?? systemClock
  const at = clock === systemClock ? undefined : () => clock.now().getTime()
  fastify.decorate('sessionSigner', {
    sign: (payload: { sid: string }) =>
      at === undefined ? fastify.jwt.sign(payload) : fastify.jwt.sign(payload, { clockTimestamp: at() }),
    verify: (token: string) => verifyWithAny(fastify, token, config.session.previousSecrets, at)
  })
  fastify.decorateRequest('principal', null)

  const cookieOptions = (reply: FastifyReply) => browserCookie(config, reply, '/')
  fastify.decorateReply('setSessionCookie', function (this: FastifyReply, token: string) {
    return this.setCookie(SESSION_COOKIE, token, { ...cookieOptions(this), maxAge: config.session.ttlSeconds })
  })
  fastify.decorateReply('clearSessionCookie', function (this: FastifyReply) {
    return this.clearCookie(SESSION_COOKIE, cookieOptions(this))
  })
}

/**
 * A session token signed with SESSION_SECRET, or else with one of SESSION_SECRET_PREVIOUS (a
 * rotation: sessions started before it keep working while the old secret is listed). Only a
 * signature another secret made is tried again; an expired or foreign token fails at once.
 */
function verifyWithAny (
  fastify: FastifyInstance, token: string, previous: readonly string[], at: (() => number) | undefined
): { sid?: unknown } {
  const clockTimestamp = at?.()
  try {
    return clockTimestamp === undefined
      ? fastify.jwt.verify<{ sid?: unknown }>(token)
      : fastify.jwt.verify<{ sid?: unknown }>(token, { clockTimestamp, cache: false })
  } catch (err) {
    if (previous.length === 0 || (err as { code?: unknown }).code !== 'FAST_JWT_INVALID_SIGNATURE') throw err
    for (const key of previous) {
      try {
        return fastify.jwt.verify<{ sid?: unknown }>(
          token, { key, cache: false, ...(clockTimestamp === undefined ? {} : { clockTimestamp }) }
        )
      } catch {}
    }
    throw err
  }
}

export const authTokens = fp(authTokensPlugin, { name: 'auth-tokens', fastify: '5.x' })

/**
 * The cheap half of the sessionCookie scheme, run before the body is read (see security.ts):
 * no cookie, or one this service did not sign or that has expired → 401 without parsing the
 * body or touching the database. The session row and the role are checked after validation.
 */
export function createSessionPrecheck (svc: SecurityServices) {
  return async function sessionPrecheck (request: FastifyRequest): Promise<void> {
    const token = requestCookie(request, SESSION_COOKIE)
    if (token === undefined || token === '' || !svc.sessionTokenVerifies(token)) throw serviceError('UNAUTHENTICATED')
  }
}

export function createSecurityHandlers (svc: SecurityServices, bearerFailures: BearerFailures) {
  return {
    async sessionCookie (request: FastifyRequest, _reply: FastifyReply, roles: string[]) {
      const token = requestCookie(request, SESSION_COOKIE)
      if (token === undefined || token === '') throw serviceError('UNAUTHENTICATED')
      const principal = await svc.authenticateSession(token)
      if (principal === null) throw serviceError('UNAUTHENTICATED')
      request.principal = { ...principal, requestId: request.id }
      for (const role of roles) {
        if (principal.role !== role) throw serviceError('FORBIDDEN', [role])
      }
    },
    async apiKey (request: FastifyRequest, _reply: FastifyReply, scopes: string[]) {
      const header = request.headers.authorization
      const m = header !== undefined ? /^Bearer ([\x21-\x7e]{1,200})$/i.exec(header) : null
      if (m === null) throw serviceError('UNAUTHENTICATED')
      // An address that failed too often this minute is refused before the lookup (a query each).
      await bearerFailures.check(request)
      const principal = await svc.authenticateApiKey(m[1] as string)
      if (principal === null) {
        await bearerFailures.record(request)
        throw serviceError('UNAUTHENTICATED')
      }
      request.principal = { ...principal, requestId: request.id }
      // The scopes the operation's apiKey requirement names (403 INSUFFICIENT_SCOPE otherwise).
      requireScopes(request.principal, scopes)
    },
    async slackSignature (request: FastifyRequest) {
      svc.verifySlackSignature(request)
    }
  }
}
