import type { HandlerDeps, HandlerGroup } from './types.js'

export function emailEventHandlers ({ services }: HandlerDeps): HandlerGroup<'postEmailEventsResend'> {
  return {
    async postEmailEventsResend (request) {
      // The signature covers the raw bytes (rawBody: true in the contract); Svix's header names.
      const h = request.headers
      const one = (v: string | string[] | undefined): string => (Array.isArray(v) ? v[0] : v) ?? ''
      return await services.bounces.resendEvent({
        id: one(h['svix-id']),
        timestamp: one(h['svix-timestamp']),
        signature: one(h['svix-signature']),
        body: request.rawBody ?? Buffer.alloc(0)
      }, request.body)
    }
  }
}
