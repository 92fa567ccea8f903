import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'
import { serviceError } from '../src/errors.js'
import { IMMUTABLE } from '../src/console/assets.js'

const LOGO_NOT_FOUND = serviceError('NOT_FOUND', ['Logo'])

export function brandingHandlers ({ services }: HandlerDeps): HandlerGroup<
  'getWorkspaceBranding' | 'patchWorkspaceBranding' | 'putWorkspaceBrandingLogo' | 'deleteWorkspaceBrandingLogo' |
  'getBrandingLogo'
> {
  const svc = services.workspaceBranding
  return {
    async getWorkspaceBranding (request) {
      return await svc.get(principalOf(request))
    },
    async patchWorkspaceBranding (request) {
      return await svc.update(principalOf(request), request.body)
    },
    async putWorkspaceBrandingLogo (request) {
      // The image parser (src/body-parsing.ts) gives the bytes of image/png, image/jpeg and image/webp bodies.
      const body: unknown = request.body
      const declared = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
      if (!Buffer.isBuffer(body)) throw serviceError('LOGO_TYPE_UNSUPPORTED', [declared === '' ? 'no type' : declared])
      return await svc.putLogo(principalOf(request), body, declared)
    },
    async deleteWorkspaceBrandingLogo (request) {
      return await svc.removeLogo(principalOf(request))
    },
    async getBrandingLogo (request, reply) {
      const logo = await svc.logo(request.params.file)
      if (logo === null) {
        return await reply.code(404).send({ message: LOGO_NOT_FOUND.message, code: LOGO_NOT_FOUND.code })
      }
      return await reply.type(logo.mediaType)
        // E-mails show it from webmail's origin: CORP cross-origin, not the assets' same-origin.
        .headers({
          'cache-control': IMMUTABLE,
          'x-content-type-options': 'nosniff',
          'cross-origin-resource-policy': 'cross-origin'
        }).code(200).send(logo.bytes)
    }
  }
}
