import type { FastifyRequest } from 'fastify'
import { serviceError } from '../errors.js'

// The one CSRF check. A browser says where a request comes from; a request that changes state on
// the strength of the session cookie (or that sets one: sign-in, sign-up, setup, sign-out) is
// taken only from the service's own pages. The model is Go's http.CrossOriginProtection (and
// Rails', Django's): no token to carry, only what the browser itself attaches and a page cannot
// forge.
//  1. Sec-Fetch-Site present (every current browser): `same-origin` or `none` (the person typed
//     or bookmarked it) passes; `same-site` (another port, a sibling subdomain) and `cross-site`
//     are refused. SameSite=Lax cookies still travel with same-site requests, so it matters.
//  2. Otherwise Origin present (older browsers): it must be PUBLIC_URL's origin. `null` (a
//     sandboxed frame, a redirect across origins) is refused.
//  3. Neither: not a browser (curl, a server-side client, a test), or one that sends no
//     metadata for a same-origin GET-like navigation; nothing a page on another origin can
//     make a browser send. Passes.
// Safe methods (GET, HEAD, OPTIONS) are never checked: they change nothing.

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

export function isUnsafeMethod (method: string): boolean {
  return UNSAFE.has(method)
}

/** The onRequest hook that refuses a cross-origin state change with 403 CSRF_REJECTED. */
export function createCrossOriginCheck (publicUrl: string) {
  const origin = new URL(publicUrl).origin
  return async function crossOriginCheck (request: FastifyRequest): Promise<void> {
    const site = request.headers['sec-fetch-site']
    if (site !== undefined) {
      if (site === 'same-origin' || site === 'none') return
      throw serviceError('CSRF_REJECTED')
    }
    const from = request.headers.origin
    if (from !== undefined && from !== origin) throw serviceError('CSRF_REJECTED')
  }
}
