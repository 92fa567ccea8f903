import type { Principal } from '../principal.js'
import type { AuditAction } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import { auditActorOf, auditPrincipalAction } from '../audit/actor.js'
import {
  deleteDomain, findVerifiedDomain, insertDomain, listDomains, lockAndCountDomains, updateDomainPolicy,
  type DomainPolicy, type DomainRow
} from '../db/domains.js'
import { serviceError } from '../errors.js'
import { randomToken } from '../lib/tokens.js'
import { normalizeDomain } from './name.js'
import {
  domainOr404, domainView, lookForRecord, recordLook, type DomainDeps, type DomainView
} from './context.js'
import { requireAdmin } from '../lib/require-admin.js'

// The admin operations on a workspace's domains: add, list, one, policy, remove, verify now.

/** Domains one workspace may hold (the list is not paged). */
const DOMAINS_PER_WORKSPACE = 50

/** An admin's act on a domain, in its transaction: the domain is the target, its name leads the payload. */
async function auditDomain (
  deps: Pick<DomainDeps, 'events'>, tx: Queryable, actor: Principal, action: AuditAction,
  domain: Pick<DomainRow, 'id' | 'domain'>, payload: Record<string, unknown>, now: Date
): Promise<void> {
  await auditPrincipalAction(deps.events, tx, actor, {
    action, target: { type: 'domain', id: domain.id }, payload: { domain: domain.domain, ...payload }, now
  })
}

export async function addDomain (
  deps: DomainDeps, actor: Principal, input: { domain: string, policy?: DomainPolicy | undefined }
): Promise<DomainView> {
  requireAdmin(actor)
  const domain = normalizeDomain(input.domain)
  const policy = input.policy ?? 'off'
  const now = deps.clock.now()
  const row = await deps.db.transaction(async tx => {
    if (await lockAndCountDomains(tx, actor.workspaceId) >= DOMAINS_PER_WORKSPACE) {
      throw serviceError('DOMAIN_LIMIT_REACHED', [String(DOMAINS_PER_WORKSPACE)])
    }
    const holder = await findVerifiedDomain(tx, domain)
    if (holder !== null && holder.workspaceId !== actor.workspaceId) throw serviceError('DOMAIN_CLAIMED', [domain])
    // 256 random bits per domain and workspace: nobody can publish another workspace's record.
    const inserted = await insertDomain(tx, {
      workspaceId: actor.workspaceId, domain, policy, token: randomToken(), createdBy: actor.userId, now
    })
    if (inserted === null) throw serviceError('DOMAIN_EXISTS', [domain])
    await auditDomain(deps, tx, actor, 'domain.added', inserted, { policy }, now)
    return inserted
  })
  return domainView(row)
}

export async function listDomainViews (deps: DomainDeps, actor: Principal): Promise<DomainView[]> {
  requireAdmin(actor)
  return (await listDomains(deps.db, actor.workspaceId)).map(domainView)
}

export async function getDomain (deps: DomainDeps, actor: Principal, id: string): Promise<DomainView> {
  requireAdmin(actor)
  return domainView(await domainOr404(deps, actor, id))
}

export async function setDomainPolicy (
  deps: DomainDeps, actor: Principal, id: string, policy: DomainPolicy
): Promise<DomainView> {
  requireAdmin(actor)
  const now = deps.clock.now()
  const row = await deps.db.transaction(async tx => {
    const current = await domainOr404(deps, actor, id, { forUpdate: true, q: tx })
    if (current.policy === policy) return current
    const updated = await updateDomainPolicy(tx, current.id, policy, now) as DomainRow
    await auditDomain(deps, tx, actor, 'domain.policy_changed', current, { from: current.policy, to: policy }, now)
    return updated
  })
  return domainView(row)
}

export async function removeDomain (deps: DomainDeps, actor: Principal, id: string): Promise<void> {
  requireAdmin(actor)
  await domainOr404(deps, actor, id)
  const now = deps.clock.now()
  await deps.db.transaction(async tx => {
    const removed = await deleteDomain(tx, actor.workspaceId, id)
    if (removed === null) throw serviceError('NOT_FOUND', ['Domain'])
    await auditDomain(deps, tx, actor, 'domain.removed', removed, { status: removed.status }, now)
  })
}

/** Look for the TXT record now (an admin's "verify now"). */
export async function verifyDomainNow (deps: DomainDeps, actor: Principal, id: string): Promise<DomainView> {
  requireAdmin(actor)
  const row = await domainOr404(deps, actor, id)
  const look = await lookForRecord(deps, row)
  return domainView(await recordLook(deps, row, look, auditActorOf(actor)))
}
