import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../config.js'
import { randomToken } from '../lib/tokens.js'

// The cookies the service sets in a browser besides the session's (src/plugins/auth.ts sets that
// one with the same options): handlers import these, never a plugin. And how every cookie is read.

/**
 * A cookie the request carries. The Cookie header is parsed on the first read, not before each
 * request (@fastify/cookie registered with `hook: false`, src/plugins/auth.ts): health, the
 * contract and every API-key call read none, and each paid for a parse and a Map. Read cookies
 * here only: `request.cookies` is null until something read or set one (lint refuses it elsewhere).
 */
export function requestCookie (request: FastifyRequest, name: string): string | undefined {
  const parsed = request.cookies as FastifyRequest['cookies'] | null
  if (parsed !== null) return parsed[name]
  const header = request.headers.cookie
  request.cookies = header !== undefined && header !== '' ? request.server.parseCookie(header) : {}
  return request.cookies[name]
}

/**
 * Options for every cookie the service sets in a browser (the session, OAuth states): HttpOnly;
 * SameSite=Lax, so a provider's top-level redirect back carries it; Secure unless this is
 * plain-http local — behind a TLS-terminating proxy (TRUST_PROXY), X-Forwarded-Proto: https also
 * makes it Secure.
 */
export function browserCookie (config: Config, reply: FastifyReply, path: string, sameSite: 'lax' | 'strict' = 'lax') {
  return {
    httpOnly: true,
    sameSite,
    path,
    secure: config.session.secureCookie || reply.request.protocol === 'https'
  }
}

/**
 * A browser's OAuth state cookie, one per flow: set at the redirect, read and cleared at the
 * callback (single use, whatever the outcome).
 */
export function oauthStateCookie (config: Config, cookie: { name: string, path: string, maxAgeSeconds: number }) {
  const options = (reply: FastifyReply) => browserCookie(config, reply, cookie.path)
  return {
    set (reply: FastifyReply, state: string): void {
      reply.setCookie(cookie.name, state, { ...options(reply), maxAge: cookie.maxAgeSeconds })
    },
    take (request: FastifyRequest, reply: FastifyReply): string | undefined {
      reply.clearCookie(cookie.name, options(reply))
      return requestCookie(request, cookie.name)
    }
  }
}

/**
 * The secret that binds an e-mailed sign-in link to the browser that asked for it — a login link,
 * a domain's join link (both asked for by POST /api/auth/login-link), an invite link's
 * confirmation (POST /api/join/{code}): set (or kept, so two requests in a row both bind) when the
 * link is asked for, read by the previews. SameSite=Strict and HttpOnly: only this service's own
 * pages ever send it; its path is /api, where those operations are.
 */
export function loginLinkBrowserCookie (config: Config, ttlSeconds: number) {
  const name = 'login_link_browser'
  const options = (reply: FastifyReply) => browserCookie(config, reply, '/api', 'strict')
  const read = (request: FastifyRequest): string | null => {
    const value = requestCookie(request, name)
    return value !== undefined && /^[\w-]{43}$/.test(value) ? value : null
  }
  return {
    read,
    /** This browser's secret, made and set when it has none yet; the cookie's life starts again. */
    ensure (request: FastifyRequest, reply: FastifyReply): string {
      const value = read(request) ?? randomToken()
      reply.setCookie(name, value, { ...options(reply), maxAge: ttlSeconds })
      return value
    }
  }
}

/**
 * The SAML sign-in's state cookie. The IdP's page posts the response to the ACS URL from its own
 * site, and a SameSite=Lax cookie is not sent with a cross-site POST: this one is SameSite=None,
 * which browsers take only with Secure (and keep for http://localhost too), and scoped to the ACS
 * path of the one connection, so no other request carries it. Chosen over a same-site re-post
 * page (the ACS answering a page that posts again from our origin): that needs a script or a
 * second click, and the cookie it would then read is no better bound than this one. What the ACS
 * acts on is signed by the connection's IdP for this browser's request (InResponseTo); the cookie
 * only says the browser is the one that asked.
 */
export function samlStateCookie (connectionId: string, maxAgeSeconds: number) {
  const name = 'sso_saml_state'
  const options = {
    httpOnly: true, sameSite: 'none' as const, secure: true, path: `/api/sso/connections/${connectionId}/saml/acs`
  }
  return {
    set (reply: FastifyReply, state: string): void {
      reply.setCookie(name, state, { ...options, maxAge: maxAgeSeconds })
    },
    take (request: FastifyRequest, reply: FastifyReply): string | undefined {
      reply.clearCookie(name, options)
      return requestCookie(request, name)
    }
  }
}
