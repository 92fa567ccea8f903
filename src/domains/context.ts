import type { Ports } from '../ports/index.js'
import { notFoundIn, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { AuditActor } from '../db/audit-events.js'
import type { NotifyRequest } from '../invite-requests/context.js'
import { findDomain, recordDomainCheck, type DomainRow, type DomainStatus } from '../db/domains.js'
import { isUniqueViolation } from '../db/errors.js'
import type { Queryable } from '../db/client.js'
import { serviceError } from '../errors.js'
import { isUuid } from '../lib/uuid.js'
import { withDeadline } from '../lib/deadline.js'
import { verificationRecord } from './name.js'

// What the domain operations share (admin.ts, verify.ts, join.ts): their dependencies, the view
// of a row, and one look at DNS with what it changes.

export type DomainView = components['schemas']['Domain']

export type DomainDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'log' | 'events' | 'mailer' | 'resolver' | 'jobs'> & {
  /** Told of a join that became an invite request (a domain under `suggest`). */
  notifyRequest: NotifyRequest
}

/** A domain pending this long is failed. */
const PENDING_MS = 30 * 86_400_000

function failsAt (row: Pick<DomainRow, 'createdAt'>): Date {
  return new Date(new Date(row.createdAt).getTime() + PENDING_MS)
}

export function domainView (row: DomainRow): DomainView {
  const iso = (d: Date | null): string | null => d === null ? null : new Date(d).toISOString()
  return {
    id: row.id,
    domain: row.domain,
    status: row.status,
    policy: row.policy,
    verification: verificationRecord(row.domain, row.token),
    checkedAt: iso(row.checkedAt),
    checkError: row.checkError,
    verifiedAt: iso(row.verifiedAt),
    failedAt: iso(row.failedAt),
    failsAt: row.status === 'pending' ? failsAt(row).toISOString() : null,
    createdAt: new Date(row.createdAt).toISOString(),
    updatedAt: new Date(row.updatedAt).toISOString()
  }
}

/** The actor's domain `id`, or 404 (MCP arguments and REST ids alike); 401 when the workspace is gone. */
export async function domainOr404 (
  deps: Pick<DomainDeps, 'db'>, actor: Principal, id: string, opts: { forUpdate?: boolean, q?: Queryable } = {}
): Promise<DomainRow> {
  const row = isUuid(id) ? await findDomain(opts.q ?? deps.db, actor.workspaceId, id, opts) : null
  if (row === null) throw await notFoundIn(opts.q ?? deps.db, actor.workspaceId, 'Domain')
  return row
}

/** One look at the domain's TXT record: found, or why not (a short sentence, no secret). */
export async function lookForRecord (
  deps: Pick<DomainDeps, 'resolver' | 'config'>, row: DomainRow
): Promise<{ found: true } | { found: false, error: string }> {
  const { name, value } = verificationRecord(row.domain, row.token)
  try {
    // The adapter bounds each query; this bounds the whole look (several servers, retries).
    const deadlineMs = 2 * deps.config.dns.timeoutMs + 1000
    const records = await withDeadline(deps.resolver.resolveTxt(name), deadlineMs, 'DNS lookup')
    if (records.some(chunks => chunks.join('') === value)) return { found: true }
    return { found: false, error: `no TXT record ws-verify=… with this domain's token at ${name}` }
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).name
    return { found: false, error: `the DNS lookup of ${name} failed (${code})` }
  }
}

/**
 * Record a look's outcome in one transaction with its event: found → verified (domain.verified),
 * not found → as it was with the reason, or failed once pending for 30 days (domain.failed).
 * Returns the row, or DOMAIN_CLAIMED when another workspace holds the domain verified.
 */
export async function recordLook (
  deps: DomainDeps,
  row: DomainRow,
  look: { found: true } | { found: false, error: string },
  actor: AuditActor
): Promise<DomainRow> {
  const now = deps.clock.now()
  try {
    return await deps.db.transaction(async tx => {
      // The row as it is now (an admin and the job may look at once; it may have been removed).
      const current = await findDomain(tx, row.workspaceId, row.id, { forUpdate: true })
      if (current === null) throw serviceError('NOT_FOUND', ['Domain'])
      const overdue = current.status === 'pending' && failsAt(current) <= now
      const status: DomainStatus = look.found ? 'verified' : overdue ? 'failed' : current.status
      const updated = await recordDomainCheck(tx, {
        id: current.id, status, checkError: look.found ? null : look.error, now
      }) as DomainRow
      if (status !== current.status) {
        await deps.events.record(tx, {
          workspaceId: current.workspaceId,
          action: status === 'verified' ? 'domain.verified' : 'domain.failed',
          actor,
          target: { type: 'domain', id: current.id },
          payload: { domain: current.domain, policy: current.policy },
          now
        })
      }
      return updated
    })
  } catch (err) {
    if (isUniqueViolation(err)) throw serviceError('DOMAIN_CLAIMED', [row.domain])
    throw err
  }
}
