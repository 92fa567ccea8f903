import { Resolver as DnsResolver } from 'node:dns/promises'
import type { Resolver } from '../ports/index.js'

// The Resolver port's adapter: node:dns/promises (c-ares) on the configured name servers
// (DNS_SERVERS; none: the system's), each query bounded by DNS_TIMEOUT_MS and tried twice.
// No record (NODATA) and no such name (NXDOMAIN) are answers, []; anything else (a timeout, a
// refusal, SERVFAIL) is thrown, for the caller to record as "the lookup failed".

const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND'])

export function createDnsResolver (opts: { servers: readonly string[], timeoutMs: number }): Resolver {
  const resolver = new DnsResolver({ timeout: opts.timeoutMs, tries: 2 })
  if (opts.servers.length > 0) resolver.setServers([...opts.servers])
  return {
    async resolveTxt (hostname) {
      try {
        return await resolver.resolveTxt(hostname)
      } catch (err) {
        if (NO_RECORDS.has((err as { code?: string }).code ?? '')) return []
        throw err
      }
    }
  }
}
