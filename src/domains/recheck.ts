import { systemActor } from '../audit/actor.js'
import { deleteExpiredJoinTokens, listDueDomains, type DomainRow } from '../db/domains.js'
import { lookForRecord, recordLook, type DomainDeps } from './context.js'

// The periodic look at pending domains (the `domain-verification` job, every 10 minutes): each
// pending domain is looked at about once an hour, at most 20 a run, 5 lookups at a time, so a
// run is bounded by 4 DNS deadlines whatever the number of domains; a domain pending 30 days is
// failed at its next look. Join links past their expiry are deleted on the way.

const LOOK_EVERY_MS = 3_600_000
const PER_RUN = 20
const AT_ONCE = 5

export interface RecheckOutcome { looked: number, verified: number, failed: number }

export async function recheckDomains (deps: DomainDeps): Promise<RecheckOutcome> {
  const now = deps.clock.now()
  const due = await listDueDomains(deps.db, { checkedBefore: new Date(now.getTime() - LOOK_EVERY_MS), limit: PER_RUN })
  const outcome: RecheckOutcome = { looked: 0, verified: 0, failed: 0 }
  const actor = systemActor('domain verification')
  const lookAt = async (row: DomainRow): Promise<void> => {
    try {
      const after = await recordLook(deps, row, await lookForRecord(deps, row), actor)
      outcome.looked++
      if (after.status === 'verified') outcome.verified++
      if (after.status === 'failed') outcome.failed++
    } catch (err) {
      // Removed meanwhile, or verified by another workspace first: the next look says more.
      deps.log.info({ domainId: row.id, err: (err as Error).message }, 'domain look not recorded')
    }
  }
  for (let i = 0; i < due.length; i += AT_ONCE) await Promise.all(due.slice(i, i + AT_ONCE).map(lookAt))
  await deleteExpiredJoinTokens(deps.db, now)
  if (outcome.looked > 0) deps.log.info(outcome, 'pending domains looked at')
  return outcome
}
