import type { Principal } from '../principal.js'
import { requireAdminScope, workspaceGone } from '../principal.js'
import { serviceError } from '../errors.js'
import type { Role } from '../db/users.js'
import { findWorkspace } from '../db/workspaces.js'
import {
  expireStaleAmong, insertBatch, insertBatchItems, memberEmailsAmong, upsertBatchInvitations,
  type BatchActor, type BatchItem
} from '../db/invitation-batches.js'
import { storedAddress } from '../lib/email.js'
import { auditPrincipalActions } from '../audit/actor.js'
import type { IdempotentAttempt } from '../idempotency/idempotency.js'
import type { JobEngine } from '../ports/job-engine.js'
import { recordExpiry } from './expiry.js'
import type { InvitationContext } from './context.js'

// POST /api/invitations/batch: every row's result is decided and written in one transaction —
// the batch, its rows, an invitation and its audit event per invited row, and the jobs that will
// send the e-mails (a chunk of rows each). Nothing is sent here. The budget is drawn for the rows
// that will be e-mailed, in request order; the rows past it are reported over_budget and not
// invited at all. A rollback gives the drawn budget back.

/** Rows per delivery job: its e-mails go out together over the mailer's connections. */
const BATCH_CHUNK = 50

const ALREADY_MEMBER = 'A member of the workspace already has this e-mail'
const OVER_BUDGET = 'Past the workspace\'s hourly invitation e-mail budget'

export interface BatchInput {
  role?: Role
  /** The invitees' language (BCP 47) where a row names none. */
  locale?: string
  rows: Array<{ email: string, role?: Role, locale?: string }>
}

/** A row as classified before anything is written; `result` unset: to invite. */
interface Draft extends BatchItem { key: string, locale: string | null }

/**
 * Only admins grant the admin role (an API key, only with `members:admin`); a row asking for more
 * than its caller may grant refuses the batch.
 */
function checkGrantable (actor: Principal, drafts: Draft[]): void {
  if (!drafts.some(d => d.role === 'admin')) return
  if (actor.role !== 'admin') throw serviceError('FORBIDDEN', ['admin'])
  requireAdminScope(actor)
}

/** Normalized rows, with the invalid and duplicate ones already decided. */
export function classifyRows (input: BatchInput): Draft[] {
  const seen = new Map<string, number>()
  return input.rows.map((row, position) => {
    const given = row.email.trim()
    const role = row.role ?? input.role ?? 'member'
    const base = {
      position,
      role,
      locale: row.locale ?? input.locale ?? null,
      invitationId: null,
      delivery: null,
      attempts: 0,
      retryAfterSeconds: null,
      duplicateOf: null
    }
    const email = storedAddress(given)
    if (email === null) {
      const shown = given.slice(0, 320)
      return { ...base, key: '', email: shown, result: 'invalid' as const, message: 'Not an e-mail address' }
    }
    const first = seen.get(email)
    if (first !== undefined) {
      const message = `The same address is row ${first} of this batch`
      return { ...base, key: email, email, result: 'duplicate' as const, duplicateOf: first, message }
    }
    seen.set(email, position)
    const open = undefined as unknown as BatchItem['result']
    return { ...base, key: email, email, result: open, message: null }
  })
}

function actorOf (p: Principal): BatchActor {
  return { kind: p.kind, userId: p.userId, email: p.email, name: p.name, apiKeyId: p.apiKeyId, requestId: p.requestId }
}

/**
 * Writes the batch and queues its e-mails; answers its id. With an Idempotency-Key, the batch id
 * is the key's checkpoint (same transaction): a retry after a crash answers that batch.
 */
export async function createBatch (
  ctx: InvitationContext & { jobs: JobEngine },
  actor: Principal,
  drafts: Draft[],
  keyed?: { key: string, attempt: IdempotentAttempt }
): Promise<string> {
  const { db, clock, events, invitationBudget } = ctx.ports
  checkGrantable(actor, drafts)
  const ws = await findWorkspace(db, actor.workspaceId)
  if (ws === null) throw workspaceGone()
  let drawn = 0
  try {
    return await db.transaction(async tx => {
      const now = clock.now()
      const open = drafts.filter(d => d.result === undefined)
      const members = await memberEmailsAmong(tx, ws.id, open.map(d => d.email))
      for (const d of open) {
        if (members.has(d.email)) Object.assign(d, { result: 'already_member', message: ALREADY_MEMBER })
      }
      const toSend = open.filter(d => d.result === undefined)
      const { granted, retryAfterSeconds } = await invitationBudget.takeUpTo(ws.id, toSend.length)
      drawn = granted
      for (const d of toSend.slice(granted)) {
        Object.assign(d, { result: 'over_budget', retryAfterSeconds, message: OVER_BUDGET })
      }
      const sending = toSend.slice(0, granted)
      for (const stale of await expireStaleAmong(tx, ws.id, sending.map(d => d.email), now)) {
        await recordExpiry(tx, events, stale, now)
      }
      const made = new Map((await upsertBatchInvitations(tx, {
        workspaceId: ws.id,
        rows: sending,
        expiresAt: new Date(now.getTime() + ctx.ttlMs),
        invitedBy: actor.kind === 'apiKey' ? null : actor.userId,
        invitedByApiKey: actor.apiKeyId,
        now
      })).map(m => [m.email, m]))
      // One audit event per invitation, as a single invite writes it, all in one statement.
      await auditPrincipalActions(events, tx, actor, sending.map(d => {
        const m = made.get(d.email)
        if (m === undefined) throw new Error('an invitation of the batch was not written')
        Object.assign(d, { result: m.created ? 'invited' : 'resent', invitationId: m.id, delivery: 'queued' })
        return {
          action: m.created ? 'invitation.created' : 'invitation.resent',
          target: { type: 'invitation', id: m.id },
          payload: { email: d.email, role: d.role },
          idempotencyKey: keyed?.key,
          now
        }
      }))
      const batch = await insertBatch(tx, { workspaceId: ws.id, actor: actorOf(actor), total: drafts.length, now })
      await insertBatchItems(tx, batch.id, drafts)
      await queueDelivery(ctx.jobs, tx, batch.id, drafts)
      await keyed?.attempt.checkpoint(tx, { batchId: batch.id })
      return batch.id
    })
  } catch (err) {
    if (drawn > 0) await invitationBudget.refund(ws.id, drawn).catch(() => {})
    throw err
  }
}

/** One job per chunk of rows that has an e-mail to send (queued in one statement); the workers are woken at commit. */
async function queueDelivery (
  jobs: JobEngine, tx: Parameters<JobEngine['send']>[0], batchId: string, drafts: Draft[]
): Promise<void> {
  const chunks: Array<{ batchId: string, from: number, to: number }> = []
  for (let from = 0; from < drafts.length; from += BATCH_CHUNK) {
    const to = Math.min(drafts.length, from + BATCH_CHUNK) - 1
    if (drafts.slice(from, to + 1).some(d => d.delivery === 'queued')) chunks.push({ batchId, from, to })
  }
  if (chunks.length === 0) return
  await jobs.sendMany(tx, 'invitation-batch', chunks)
  const wake = (): void => { jobs.wake('invitation-batch') }
  if (tx.afterCommit !== undefined) tx.afterCommit(wake)
  else wake()
}
