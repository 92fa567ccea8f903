import { isServiceError } from '../errors.js'
import type { Principal } from '../principal.js'
import { findWorkspace } from '../db/workspaces.js'
import {
  claimBatchInvitation, completeBatchIfDone, countBatchAttempt, findBatchById, queuedBatchItems, settleBatchItem,
  type BatchItem, type BatchRow
} from '../db/invitation-batches.js'
import { releaseSendLease, type InvitationRow } from '../db/invitations.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { deliverInvitation, type Inviter } from './delivery.js'
import { inviterOf, type InvitationContext } from './context.js'

// The job that sends one chunk of a batch's e-mails (queued by batch.ts). Each queued row is sent
// as a single invite's e-mail is: under the invitation's send lease, a fresh token written before
// the e-mail leaves, the invitation's delivery state recorded after (deliverInvitation). Its row
// is settled after that. A job run again — retried, or after its worker died (kill -9) — sends
// only the rows still queued, and a row whose invitation was delivered meanwhile (its state says
// sent) is settled without a second e-mail. Failed sends are retried by the job (pg-boss, with
// backoff) up to MAX_ATTEMPTS per row; then the row is failed and its budget given back.

const MAX_ATTEMPTS = 5

/** What one row's delivery came to: settled, or to be tried again by the job. */
type Outcome = 'settled' | 'retry'

interface ChunkJob { batchId: string, from: number, to: number }

function chunkOf (data: unknown): ChunkJob | null {
  const d = data as Partial<ChunkJob> | null
  if (typeof d?.batchId !== 'string' || typeof d.from !== 'number' || typeof d.to !== 'number') return null
  return { batchId: d.batchId, from: d.from, to: d.to }
}

function principalOfBatch (b: BatchRow): Principal {
  return { ...b.actor, workspaceId: b.workspaceId, role: 'admin', sessionId: null }
}

export async function deliverBatchChunk (ctx: InvitationContext, data: unknown): Promise<void> {
  const job = chunkOf(data)
  const { db, clock, log } = ctx.ports
  if (job === null) { log.warn({ data }, 'invitation batch job without its chunk; dropped'); return }
  const batch = await findBatchById(db, job.batchId)
  const ws = batch !== null ? await findWorkspace(db, batch.workspaceId) : null
  if (batch === null || ws === null) return // deleted with its workspace
  const items = await queuedBatchItems(db, batch.id, job.from, job.to)
  const inviter = inviterOf(principalOfBatch(batch))
  const outcomes = await Promise.all(items.map(async item => await deliverItem(ctx, { batch, ws, inviter }, item)))
  await completeBatchIfDone(db, batch.id, clock.now())
  const left = outcomes.filter(o => o === 'retry').length
  // Thrown: the job engine runs the chunk again later (with backoff); settled rows are not sent again.
  if (left > 0) throw new Error(`${left} e-mail(s) of invitation batch ${batch.id} to retry`)
}

interface ChunkOf { batch: BatchRow, ws: NonNullable<Awaited<ReturnType<typeof findWorkspace>>>, inviter: Inviter }

async function deliverItem (ctx: InvitationContext, c: ChunkOf, item: BatchItem): Promise<Outcome> {
  const { ports, idp, ttlMs, underSendLease } = ctx
  const { db, invitationBudget } = ports
  const settle = async (delivery: 'sent' | 'failed' | 'cancelled', message: string | null): Promise<Outcome> => {
    await settleBatchItem(db, c.batch.id, item.position, delivery, message)
    if (delivery !== 'sent') await invitationBudget.refund(c.batch.workspaceId).catch(() => {})
    return 'settled'
  }
  if (item.invitationId === null) return await settle('cancelled', 'The invitation is gone')
  const invitationId = item.invitationId
  const token = randomToken(32)
  type Claimed = InvitationRow | { id: string, moved: 'delivered' | 'gone' }
  try {
    let owner = ''
    return await underSendLease<Claimed, Outcome>(async (lease, now) => {
      owner = lease.owner
      const claimed = await claimBatchInvitation(db, {
        id: invitationId, tokenHash: hashToken(token), expiresAt: new Date(now.getTime() + ttlMs), lease, now
      })
      if (claimed === 'busy') return null
      return typeof claimed === 'string' ? { id: invitationId, moved: claimed } : claimed
    }, async row => {
      if ('moved' in row) {
        // Sent by another request since the batch was written: one e-mail, not two.
        return row.moved === 'delivered'
          ? await settle('sent', null)
          : await settle('cancelled', 'The invitation was accepted, revoked or expired before its e-mail left')
      }
      await deliverInvitation({ ...ports, idp }, {
        workspace: c.ws,
        invitation: row,
        token,
        inviter: c.inviter,
        reinvite: item.result === 'resent',
        alsoOnSent: async tx => {
          await settleBatchItem(tx, c.batch.id, item.position, 'sent', null)
          await releaseSendLease(tx, row.id, owner)
        }
      })
      return 'settled'
    })
  } catch (err) {
    if (isServiceError(err) && err.code === 'USER_EXISTS') return await settle('cancelled', err.message)
    const message = (err instanceof Error ? err.message : String(err)).slice(0, 500)
    const attempts = await countBatchAttempt(db, c.batch.id, item.position, message)
    if (attempts >= MAX_ATTEMPTS) return await settle('failed', message)
    return 'retry'
  }
}
