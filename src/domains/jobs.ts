import type { JobDefinition } from '../ports/job-engine.js'
import type { DomainService } from './service.js'

/** Verified domains are checked again every ten minutes: a TXT record taken down unverifies its domain. */
export function domainJobs (domains: DomainService): JobDefinition[] {
  return [{ queue: 'domain-verification', cron: '*/10 * * * *', run: async () => { await domains.recheck() } }]
}
