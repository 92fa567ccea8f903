import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'
import type { CustomFetch, CustomFetchOptions } from 'openid-client'
import type { Config } from '../config.js'
import { createAddressPolicy } from '../webhooks/address-policy.js'
import { OidcError } from './oidc-errors.js'

// Every request the relying party makes (discovery, JWKS, token endpoint) goes through this
// fetch: the webhook address policy on the address the connection really uses (so a name that
// resolves to 169.254.169.254 or 127.0.0.1 is refused, DNS rebinding included), one deadline per
// request, no redirect followed, and a cap on the answer's size. An operator may name hosts that
// are allowed to be private (a company's own Keycloak on its network); http:// is allowed only
// to those hosts and only when asked (local development, tests on loopback). A SAML IdP's
// metadata is fetched through it too (saml-metadata-fetch.ts), with its own size cap.

export interface ProviderFetchOptions {
  /** Hosts (names or literal addresses) that may resolve to private or loopback addresses. */
  allowHosts?: readonly string[]
  /** http:// to an allowed host (APP_ENV=local, tests); https is required otherwise. */
  allowHttp?: boolean
  /** The deadline of each request; 5 s unless told. */
  timeoutMs?: number
  /** DNS, for tests: resolve a name to the address they need. */
  resolve?: LookupFunction
}

export const DEFAULT_TIMEOUT_MS = 5_000
const MAX_ANSWER_BYTES = 512 * 1024
const LOOPBACK_HOSTS = ['127.0.0.1', 'localhost', '::1']

/**
 * The options of every fetch of the SSO services, from the configuration: the hosts of
 * SSO_ALLOWED_HOSTS; where private addresses are allowed (APP_ENV=local, tests), a provider on
 * loopback over http too.
 */
export function providerFetchOptions (config: Pick<Config, 'webhooks' | 'sso'>): ProviderFetchOptions {
  return config.webhooks.allowPrivateAddresses
    ? { allowHosts: [...config.sso.allowedHosts, ...LOOPBACK_HOSTS], allowHttp: true }
    : { allowHosts: config.sso.allowedHosts }
}
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304])

/** Whether http:// may be used for `url` (an allowed host, and http asked for). */
export function insecureAllowed (url: URL, opts: ProviderFetchOptions): boolean {
  return url.protocol === 'http:' && opts.allowHttp === true && isAllowedHost(url, opts)
}

function isAllowedHost (url: URL, opts: ProviderFetchOptions): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return (opts.allowHosts ?? []).some(h => h.toLowerCase() === host)
}

function bodyOf (body: CustomFetchOptions['body']): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined
  if (typeof body === 'string') return body
  if (body instanceof URLSearchParams) return body.toString()
  if (body instanceof Uint8Array || body instanceof ArrayBuffer) return Buffer.from(body as ArrayBuffer)
  // The relying party sends forms only; a stream body would be a change of this module's use.
  throw new OidcError('invalid_response')
}

function headersOf (raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers()
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v)
  }
  return headers
}

/**
 * A fetch for openid-client under the address policy; `onRequest` sees each URL (the caches count).
 * An answer over `maxBytes` (512 KiB unless told) fails with OidcError('invalid_response').
 */
export function createProviderFetch (
  opts: ProviderFetchOptions, onRequest: (url: URL) => void, maxBytes = MAX_ANSWER_BYTES
): CustomFetch {
  const dns = opts.resolve !== undefined ? { resolve: opts.resolve } : {}
  const strict = createAddressPolicy({ allowPrivate: false, ...dns })
  const open = createAddressPolicy({ allowPrivate: true, ...dns })
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS
  return async (href, init) => {
    const url = new URL(href)
    const allowed = isAllowedHost(url, opts)
    if (url.protocol === 'http:' && !insecureAllowed(url, opts)) throw new OidcError('address_not_allowed')
    const policy = allowed ? open : strict
    const refusal = await policy.check(url)
    if (refusal !== null) throw new OidcError('address_not_allowed', { cause: new Error(refusal) })
    onRequest(url)
    const signal = init.signal === undefined
      ? AbortSignal.timeout(timeoutMs)
      : AbortSignal.any([init.signal, AbortSignal.timeout(timeoutMs)])
    const body = bodyOf(init.body)
    return await new Promise<Response>((resolve, reject) => {
      const client = url.protocol === 'https:' ? https : http
      const req = client.request(url, {
        method: init.method,
        headers: { ...init.headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) },
        lookup: policy.lookup,
        agent: false,
        signal
      }, res => {
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > maxBytes) res.destroy(new OidcError('invalid_response'))
          else chunks.push(chunk)
        })
        res.on('end', () => {
          const status = res.statusCode ?? 0
          const payload = NULL_BODY_STATUSES.has(status) ? null : Buffer.concat(chunks)
          resolve(new Response(payload, { status, headers: headersOf(res.headers) }))
        })
        res.on('error', reject)
      })
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err instanceof OidcError) reject(err)
        else if (err.code === 'ERR_ADDRESS_NOT_ALLOWED') reject(new OidcError('address_not_allowed', { cause: err }))
        else reject(new OidcError('provider_unreachable', { cause: err }))
      })
      req.end(body)
    })
  }
}
