import type { Principal } from '../principal.js'
import type { SessionService } from '../sessions/service.js'
import type { DomainPolicy } from '../db/domains.js'
import type { DomainDeps, DomainView } from './context.js'
import { addDomain, getDomain, listDomainViews, removeDomain, setDomainPolicy, verifyDomainNow } from './admin.js'
import { recheckDomains, type RecheckOutcome } from './recheck.js'
import { confirmJoin, offerJoin, previewJoin, type DomainJoined, type DomainJoinPreview } from './join.js'

// Join by verified domain: an admin adds a domain and publishes a TXT record the service looks
// for (through the Resolver port); once verified, people who prove an address at it join as
// members or ask to, as the domain's policy says. One file per part (admin.ts, recheck.ts,
// join.ts) over what they share (context.ts, name.ts).

export interface DomainService {
  add(actor: Principal, input: { domain: string, policy?: DomainPolicy | undefined }): Promise<DomainView>
  list(actor: Principal): Promise<DomainView[]>
  get(actor: Principal, id: string): Promise<DomainView>
  setPolicy(actor: Principal, id: string, policy: DomainPolicy): Promise<DomainView>
  remove(actor: Principal, id: string): Promise<void>
  /** Look for the TXT record now. */
  verify(actor: Principal, id: string): Promise<DomainView>
  /** The periodic look at pending domains (the domain-verification job). */
  recheck(): Promise<RecheckOutcome>
  /** An address with no account asked for a sign-in link: a join link, if its domain lets people join. */
  offerJoin(email: string, browser: string | null): Promise<void>
  previewJoin(token: string, browser: string | null): Promise<DomainJoinPreview>
  join(input: { token: string, name?: string | undefined }): Promise<DomainJoined>
}

export function createDomainService (deps: DomainDeps & { sessions: SessionService }): DomainService {
  return {
    add: async (actor, input) => await addDomain(deps, actor, input),
    list: async actor => await listDomainViews(deps, actor),
    get: async (actor, id) => await getDomain(deps, actor, id),
    setPolicy: async (actor, id, policy) => await setDomainPolicy(deps, actor, id, policy),
    remove: async (actor, id) => { await removeDomain(deps, actor, id) },
    verify: async (actor, id) => await verifyDomainNow(deps, actor, id),
    recheck: async () => await recheckDomains(deps),
    offerJoin: async (email, browser) => { await offerJoin(deps, email, browser) },
    previewJoin: async (token, browser) => await previewJoin(deps, token, browser),
    join: async input => await confirmJoin(deps, input)
  }
}
