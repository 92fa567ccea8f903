import type { FastifyReply } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import { indexPage, loginPage, signupPage, type Page } from '../src/auth/pages.js'

export function pagesHandlers ({ config }: HandlerDeps): HandlerGroup<'getIndexPage' | 'getSignupPage' | 'getLoginPage'> {
  const identityProvider = config.workos !== null
  const send = async (reply: FastifyReply, page: Page) => await reply.headers(page.headers).type('text/html; charset=utf-8').send(page.html)
  return {
    async getIndexPage (_request, reply) { return await send(reply, indexPage({ identityProvider })) },
    // The token stays in the URL for the page's script; the page itself is the same for every token.
    async getSignupPage (_request, reply) { return await send(reply, signupPage()) },
    async getLoginPage (_request, reply) { return await send(reply, loginPage({ identityProvider })) }
  }
}
