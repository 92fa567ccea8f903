import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { HandlerDeps, HandlerGroup } from './types.js'
import { joinPage, loginPage, setupPage, signupPage } from '../src/auth/pages.js'
import { pageScriptsDir, type Page, type PageScript } from '../src/http/page-shell.js'
import type { PageLink } from '../src/i18n/page-locale.js'
import { serviceError } from '../src/errors.js'
import { negotiate } from '../src/http/accept.js'
import { consolePage, FAVICON_SVG, isConsoleScreen } from '../src/console/page.js'
import { hashedAsset, IMMUTABLE } from '../src/console/assets.js'

const SCREEN_NOT_FOUND = serviceError('NOT_FOUND', ['Console screen'])
const JOIN_PAGE_ERRORS = {
  not_found: serviceError('NOT_FOUND', ['Invite link']),
  expired: serviceError('TOKEN_EXPIRED'),
  used_up: serviceError('TOKEN_USED')
} as const

/**
 * A client that prefers JSON to HTML gets a page's error as an ErrorResponse; no Accept, `*\/*` or
 * a tie is a page (src/http/accept.ts, as the SSO pages negotiate the other way round).
 */
function wantsJson (accept: string | undefined): boolean {
  return negotiate(accept, ['text/html', 'application/json'] as const) === 'application/json'
}

export function pagesHandlers (
  { config, services }: HandlerDeps
): HandlerGroup<
  'getIndexPage' | 'getConsoleHome' | 'getConsolePage' | 'getFavicon' | 'getSignupPage' | 'getLoginPage' |
  'getSetupPage' | 'getPageScript' | 'getJoinPage' | 'getHashedAsset'
> {
  const identityProvider = config.workos !== null
  const pageOptions = { identityProvider, publicUrl: config.publicUrl }
  const send = async (
    reply: FastifyReply,
    page: Page
  ) => await reply.headers(page.headers).type('text/html; charset=utf-8').send(page.html)
  // The console's page in the browser's language until the console knows its reader's.
  const consoleFor = (request: FastifyRequest, screen: string): Page =>
    consolePage({ screen, ...pageOptions, acceptLanguage: request.headers['accept-language'] })
  const lookOf = async (request: FastifyRequest, link: PageLink) =>
    await services.pageContext.forPage(link, request.headers['accept-language'])
  // The contract's enum limits `script` to the files in pageScriptsDir; each is read once.
  const scripts = new Map<PageScript, Buffer>()
  return {
    async getPageScript (request, reply) {
      const name = request.params.script
      let body = scripts.get(name)
      if (body === undefined) {
        body = readFileSync(join(pageScriptsDir, name))
        scripts.set(name, body)
      }
      // no-cache: revalidated on each page load, so a new version of a script is picked up at once.
      return await reply.type(
        'application/javascript; charset=utf-8'
      ).header('cache-control', 'no-cache').code(200).send(body)
    },
    // The console's script and styles by content hash (src/console/assets.ts): cached for good.
    async getHashedAsset (request, reply) {
      const asset = hashedAsset(request.params.asset, request.headers['accept-encoding'])
      if (asset === null) throw serviceError('NOT_FOUND', ['Asset'])
      if (asset.encoding !== 'identity') reply.header('content-encoding', asset.encoding)
      return await reply.type(asset.type).header('cache-control', IMMUTABLE).header('vary', 'Accept-Encoding')
        .code(200).send(asset.body)
    },
    async getIndexPage (request, reply) {
      return await send(reply, consoleFor(request, 'home'))
    },
    // The route table's name for the first screen (console/routes.ts): the same page as `/`.
    async getConsoleHome (request, reply) {
      return await send(reply, consoleFor(request, 'home'))
    },
    // An unknown screen is the console's own not-found screen (the same page, 404), or the
    // ErrorResponse for a client that accepts JSON and not HTML (as the join page does).
    async getConsolePage (request, reply) {
      const { screen } = request.params
      if (isConsoleScreen(screen)) return await send(reply, consoleFor(request, screen))
      if (wantsJson(request.headers.accept)) {
        return await reply.code(404).send({ message: SCREEN_NOT_FOUND.message, code: SCREEN_NOT_FOUND.code })
      }
      return await send(reply.code(404), consoleFor(request, screen))
    },
    async getFavicon (_request, reply) {
      return await reply.type('image/svg+xml').header('cache-control', 'public, max-age=86400')
        .code(200).send(FAVICON_SVG)
    },
    // The token stays in the URL for the page's script; it only picks the page's language and look
    // (the invitation's, the sign-in link's account's: src/i18n/page-locale.ts).
    async getSignupPage (request, reply) {
      const look = await lookOf(request, { kind: 'invitation', token: request.query.token })
      return await send(reply, signupPage(look))
    },
    async getLoginPage (request, reply) {
      const look = await lookOf(request, { kind: 'login-link', token: request.query.token })
      return await send(reply, loginPage({ identityProvider }, look))
    },
    // An invite link's page: a read (scanners open links). A link that cannot be used is a page
    // saying so (404, 410), or the ErrorResponse for a client that accepts JSON and not HTML.
    async getJoinPage (request, reply) {
      const view = await services.inviteLinks.pageState(request.params.code)
      const look = await lookOf(request, { kind: 'invite-link', code: request.params.code })
      if (view.state === 'open') return await send(reply, joinPage(view, look))
      const status = view.state === 'not_found' ? 404 : 410
      if (wantsJson(request.headers.accept)) {
        const error = JOIN_PAGE_ERRORS[view.state]
        return await reply.code(status).send({ message: error.message, code: error.code })
      }
      return await send(reply.code(status), joinPage(view, look))
    },
    // Once a workspace exists the page says so instead of offering a form that could only fail.
    async getSetupPage (request, reply) {
      const look = await lookOf(request, { kind: 'none' })
      return await send(reply, setupPage({ pending: await services.setup.pending() }, look))
    }
  }
}
