import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { domainJoinPage } from '../src/domains/page.js'
import { loginLinkBrowserCookie } from '../src/http/cookies.js'
import { LOGIN_TOKEN_TTL_MS } from '../src/auth/login-link.js'

export function domainHandlers ({ services, config }: HandlerDeps): HandlerGroup<
  'postDomains' | 'getDomains' | 'getDomainsDomainId' | 'patchDomainsDomainId' | 'deleteDomainsDomainId' |
  'postDomainsDomainIdVerify' | 'postDomainJoinsPreview' | 'postDomainJoins' | 'getDomainJoinPage'
> {
  const { domains } = services
  // The browser that asked for the join link (POST /api/auth/login-link set it).
  const browserCookie = loginLinkBrowserCookie(config, LOGIN_TOKEN_TTL_MS / 1000)
  return {
    async postDomains (request, reply) {
      return await reply.code(201).send(await domains.add(principalOf(request), request.body))
    },
    async getDomains (request) {
      return { items: await domains.list(principalOf(request)) }
    },
    async getDomainsDomainId (request) {
      return await domains.get(principalOf(request), request.params.domainId)
    },
    async patchDomainsDomainId (request) {
      return await domains.setPolicy(principalOf(request), request.params.domainId, request.body.policy)
    },
    async deleteDomainsDomainId (request, reply) {
      await domains.remove(principalOf(request), request.params.domainId)
      return await reply.code(204).send()
    },
    async postDomainsDomainIdVerify (request) {
      return await domains.verify(principalOf(request), request.params.domainId)
    },
    async postDomainJoinsPreview (request) {
      return await domains.previewJoin(request.body.token, browserCookie.read(request))
    },
    async postDomainJoins (request, reply) {
      const joined = await domains.join({ token: request.body.token, name: request.body.name })
      if (joined.kind === 'requested') return await reply.code(202).send({ message: joined.message })
      return await reply.code(201).setSessionCookie(joined.token).send(joined.me)
    },
    async getDomainJoinPage (request, reply) {
      const link = { kind: 'domain-join' as const, token: request.query.token }
      const page = domainJoinPage(await services.pageContext.forPage(link, request.headers['accept-language']))
      return await reply.headers(page.headers).type('text/html; charset=utf-8').code(200).send(page.html)
    }
  }
}
