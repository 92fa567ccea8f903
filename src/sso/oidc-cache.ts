import type { ExportedJWKSCache, ServerMetadata } from 'openid-client'
import type { Clock } from '../clock.js'
import type { IdpEndpoints } from './saml-metadata.js'

// What the relying party keeps between sign-ins, per connection: the provider's discovered
// metadata and its JWKS, each for one period (an hour unless told) on the service's clock, so a
// sign-in fetches neither. Every request is counted by kind (and told to `onFetch`), which is how
// a test or the bench shows "fetched once per period, not per sign-in".
//
// The JWKS is handed to openid-client for each sign-in (setJwksCache) and taken back after it
// (getJwksCache). openid-client's own rules then apply inside one sign-in: a `kid` that no key
// has makes it fetch the JWKS again once — only when the set it holds is at least 60 s old (a
// cool-down, so tokens with made-up `kid`s cannot make it fetch per sign-in) — and it drops a set
// older than 300 s. Its age is counted on the real clock (Date.now), so the set is handed over
// with its age on our clock, capped below those 300 s: our period decides when it is old.
//
// A SAML connection's IdP metadata by URL is kept here too, for the same period (saml-metadata-fetch.ts
// fetches it), counted as 'metadata'. Unlike discovery, a failed refresh does not stop sign-ins at
// once: the last good copy serves on, up to a bounded age (a day unless told), and the fetch is
// tried again at most once a minute meanwhile, so an IdP that is down does not hold every sign-in
// for the fetch's deadline. With no good copy the failure is the caller's.

export type OidcFetchKind = 'discovery' | 'jwks' | 'token' | 'metadata'

/** A document kept per key for the period, the last good copy serving on while refreshes fail. */
interface KeptDocuments<T> {
  /**
   * The document for `key`: held, or fetched by `load` when absent or past the period (concurrent
   * callers share one fetch). When a refresh fails and the copy held is younger than the bound,
   * `onStale` is told (once per failed fetch) and the copy answers; else the failure is thrown.
   */
  get(key: string, load: () => Promise<T>, onStale: (err: unknown, ageMs: number) => void): Promise<T>
}

export interface OidcCache {
  readonly clock: Clock
  /** Requests made, by kind, since the cache was made. */
  readonly counts: Readonly<Record<OidcFetchKind, number>>
  /** The metadata for `key`, fetched by `load` when absent or past the period (concurrent callers share one fetch). */
  metadata(key: string, load: () => Promise<ServerMetadata>): Promise<ServerMetadata>
  /** The JWKS to hand to openid-client for a sign-in, or undefined to let it fetch. */
  jwks(key: string): ExportedJWKSCache | undefined
  /** Keeps the JWKS openid-client holds after a sign-in, when it fetched one. */
  keepJwks(key: string, handed: ExportedJWKSCache | undefined, after: ExportedJWKSCache | undefined): void
  count(kind: OidcFetchKind, key: string): void
  /** SAML IdP metadata fetched by URL, per connection and URL. */
  readonly idpMetadata: KeptDocuments<IdpEndpoints>
}

const DEFAULT_CACHE_MS = 60 * 60_000
const DEFAULT_STALE_MS = 24 * 60 * 60_000
/** After a failed refresh, how long the stale copy answers before the next try. */
const RETRY_AFTER_FAILURE_MS = 60_000
// openid-client drops a handed-over set at 300 s of age (oauth4webapi's getPublicSigKeyFromIssuerJwksUri).
const LIBRARY_MAX_AGE_S = 299

/** Documents kept for `periodMs` on `now`'s clock; a copy serves after failed refreshes until `maxStaleMs` old. */
function createKeptDocuments<T> (now: () => number, periodMs: number, maxStaleMs: number): KeptDocuments<T> {
  const held = new Map<string, { value: T, at: number, retryAt: number }>()
  const loading = new Map<string, Promise<T>>()
  const refresh = (key: string, load: () => Promise<T>, onStale: (err: unknown, ageMs: number) => void): Promise<T> => {
    const fresh = load().then(value => {
      held.set(key, { value, at: now(), retryAt: 0 })
      return value
    }, (err: unknown) => {
      const copy = held.get(key)
      const age = copy === undefined ? Infinity : now() - copy.at
      if (copy === undefined || age >= maxStaleMs) {
        held.delete(key)
        throw err
      }
      copy.retryAt = now() + RETRY_AFTER_FAILURE_MS
      onStale(err, age)
      return copy.value
    }).finally(() => { loading.delete(key) })
    loading.set(key, fresh)
    return fresh
  }
  return {
    async get (key, load, onStale) {
      const copy = held.get(key)
      const t = now()
      if (copy !== undefined && (t - copy.at < periodMs || (t < copy.retryAt && t - copy.at < maxStaleMs))) {
        return copy.value
      }
      return await (loading.get(key) ?? refresh(key, load, onStale))
    }
  }
}

export function createOidcCache (deps: {
  clock: Clock,
  periodMs?: number,
  /** How old a SAML IdP's metadata may grow while its refreshes fail; a day unless told. */
  maxStaleMs?: number,
  onFetch?: (kind: OidcFetchKind, key: string) => void
}): OidcCache {
  const periodMs = deps.periodMs ?? DEFAULT_CACHE_MS
  const counts: Record<OidcFetchKind, number> = { discovery: 0, jwks: 0, token: 0, metadata: 0 }
  const metadata = new Map<string, { value: ServerMetadata, at: number }>()
  const loading = new Map<string, Promise<ServerMetadata>>()
  const sets = new Map<string, { jwks: ExportedJWKSCache['jwks'], at: number }>()
  const now = (): number => deps.clock.now().getTime()
  return {
    clock: deps.clock,
    counts,
    idpMetadata: createKeptDocuments<IdpEndpoints>(now, periodMs, deps.maxStaleMs ?? DEFAULT_STALE_MS),
    async metadata (key, load) {
      const held = metadata.get(key)
      if (held !== undefined && now() - held.at < periodMs) return held.value
      const pending = loading.get(key)
      if (pending !== undefined) return await pending
      const fresh = load().then(value => {
        metadata.set(key, { value, at: now() })
        sets.delete(key) // a new document may name another jwks_uri
        return value
      }).finally(() => { loading.delete(key) })
      loading.set(key, fresh)
      return await fresh
    },
    jwks (key) {
      const held = sets.get(key)
      if (held === undefined) return undefined
      const ageMs = now() - held.at
      if (ageMs >= periodMs) return undefined
      const ageS = Math.min(Math.max(0, Math.floor(ageMs / 1000)), LIBRARY_MAX_AGE_S)
      return { jwks: held.jwks, uat: Math.floor(Date.now() / 1000) - ageS }
    },
    keepJwks (key, handed, after) {
      if (after?.uat === undefined || after.uat === handed?.uat) return
      sets.set(key, { jwks: after.jwks, at: now() })
    },
    count (kind, key) {
      counts[kind]++
      deps.onFetch?.(kind, key)
    }
  }
}
