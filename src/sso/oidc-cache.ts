import type { ExportedJWKSCache, ServerMetadata } from 'openid-client'
import type { Clock } from '../clock.js'

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

export type OidcFetchKind = 'discovery' | 'jwks' | 'token'

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
}

const DEFAULT_CACHE_MS = 60 * 60_000
// openid-client drops a handed-over set at 300 s of age (oauth4webapi's getPublicSigKeyFromIssuerJwksUri).
const LIBRARY_MAX_AGE_S = 299

export function createOidcCache (deps: {
  clock: Clock,
  periodMs?: number,
  onFetch?: (kind: OidcFetchKind, key: string) => void
}): OidcCache {
  const periodMs = deps.periodMs ?? DEFAULT_CACHE_MS
  const counts: Record<OidcFetchKind, number> = { discovery: 0, jwks: 0, token: 0 }
  const metadata = new Map<string, { value: ServerMetadata, at: number }>()
  const loading = new Map<string, Promise<ServerMetadata>>()
  const sets = new Map<string, { jwks: ExportedJWKSCache['jwks'], at: number }>()
  const now = (): number => deps.clock.now().getTime()
  return {
    clock: deps.clock,
    counts,
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
