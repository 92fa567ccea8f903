import { isServiceError } from '../errors.js'
import type { Principal } from '../principal.js'
import { findWorkspace } from '../db/workspaces.js'
import {
  claimBatchInvitation, claimBatchInvitations, completeBatchIfDone, countBatchAttempt, failQueuedBatchItems,
  findBatchById, queuedBatchItems, recordBatchSends, settleBatchItem, type BatchItem, type BatchRow, type BatchSend
} from '../db/invitation-batches.js'
import type { InvitationRow } from '../db/invitations.js'
import { coalescing } from '../lib/coalesce.js'
import { hashToken, randomToken } from '../lib/tokens.js'
import { deliverInvitation, type Inviter } from './delivery.js'
import { deliveryDeps, inviterOf, type InvitationContext } from './context.js'
import type { Acquired } from './send-lease.js'

// The job that sends one chunk of a batch's e-mails (queued by batch.ts). Each queued row is sent
// as a single invite's e-mail is: under the invitation's send lease, a fresh token written before
// the e-mail leaves, the invitation's delivery state recorded after (deliverInvitation), and its
// row settled with it. What the single invite does per e-mail, a chunk does per chunk: one
// statement claims the leases (and writes the tokens) of all its invitations, the e-mails go out
// together (as many at once as the mailer has connections), and those that left are recorded as
// they leave, many to a statement (a row recorded while the last write runs goes into the next:
// an accepted e-mail is on record within a statement's time, never held back for the chunk).
// A row the chunk could not claim (another send holds its lease, or it was delivered or is gone)
// goes the one-row way, which waits for the lease or settles it without an e-mail.
// A job run again — retried, or after its worker died (kill -9) — sends only the rows still
// queued, and a row whose invitation was delivered meanwhile (its state says sent) is settled
// without a second e-mail. Failed sends are retried by the job (pg-boss, with backoff) up to
// MAX_ATTEMPTS per row; then the row is failed and its budget given back. A chunk whose job spent
// all its retries before its rows did (it crashed each time, or the database was down for the
// hours its backoff spans) comes back as a job of the dead letter queue: abandonBatchChunk fails
// the rows still queued, gives their budget back and completes the batch, and says so in the log.

const MAX_ATTEMPTS = 5
const GONE_BEFORE_SENT = 'The invitation was accepted, revoked or expired before its e-mail left'

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
  const outcomes = await deliverChunk(ctx, { batch, ws, inviter: inviterOf(principalOfBatch(batch)) }, items)
  await completeBatchIfDone(db, batch.id, clock.now())
  const left = outcomes.filter(o => o === 'retry').length
  // Thrown: the job engine runs the chunk again later (with backoff); settled rows are not sent again.
  if (left > 0) throw new Error(`${left} e-mail(s) of invitation batch ${batch.id} to retry`)
}

const GAVE_UP = 'Not sent: the delivery job of this row gave up after its retries'

/** The dead letter of a chunk whose job spent its retries: its queued rows failed, nothing sent. */
export async function abandonBatchChunk (ctx: InvitationContext, data: unknown): Promise<void> {
  const job = chunkOf(data)
  const { db, clock, log, invitationBudget } = ctx.ports
  if (job === null) { log.warn({ data }, 'abandoned invitation batch job without its chunk; dropped'); return }
  const batch = await findBatchById(db, job.batchId)
  if (batch === null) return // deleted with its workspace
  const failed = await failQueuedBatchItems(db, { ...job, message: GAVE_UP })
  if (failed > 0) await invitationBudget.refund(batch.workspaceId, failed).catch(() => {})
  await completeBatchIfDone(db, batch.id, clock.now())
  if (failed > 0) {
    log.error({ batchId: batch.id, from: job.from, to: job.to, failed },
      'invitation batch: a chunk\'s delivery job spent its retries; its queued rows are failed, no e-mail sent')
  }
}

interface ChunkOf { batch: BatchRow, ws: NonNullable<Awaited<ReturnType<typeof findWorkspace>>>, inviter: Inviter }

/** The chunk's invitations claimed in one statement and sent at once; the rest one by one. */
async function deliverChunk (ctx: InvitationContext, c: ChunkOf, items: BatchItem[]): Promise<Outcome[]> {
  const { ports: { db }, ttlMs, sendLeases } = ctx
  const tokens = new Map<string, string>()
  for (const item of items) if (item.invitationId !== null) tokens.set(item.invitationId, randomToken(32))
  const { rows, lease } = await sendLeases.acquireMany(async (sendLease, now) => await claimBatchInvitations(db, {
    claims: [...tokens].map(([id, token]) => ({ id, tokenHash: hashToken(token) })),
    expiresAt: new Date(now.getTime() + ttlMs),
    lease: sendLease,
    now
  }))
  try {
    const claimed = new Map(rows.map(row => [row.id, row]))
    const record = coalescing<BatchSend>(async sends => { await recordBatchSends(db, c.batch.id, lease.owner, sends) })
    return await Promise.all(items.map(async item => {
      const row = item.invitationId !== null ? claimed.get(item.invitationId) : undefined
      const token = row !== undefined ? tokens.get(row.id) : undefined
      if (row === undefined || token === undefined) return await deliverItem(ctx, c, item)
      try {
        return await sendRow(ctx, c, item, row, token, record)
      } catch (err) {
        return await notDelivered(ctx, c, item, err)
      }
    }))
  } finally {
    await lease.release()
  }
}

/** Sends one claimed row's e-mail; `record` writes that it left (with the row settled), as it leaves. */
async function sendRow (
  ctx: InvitationContext, c: ChunkOf, item: BatchItem, row: InvitationRow, token: string,
  record: (send: BatchSend) => Promise<void>
): Promise<Outcome> {
  await deliverInvitation(deliveryDeps(ctx), {
    workspace: c.ws,
    invitation: row,
    token,
    inviter: c.inviter,
    reinvite: item.result === 'resent',
    recordSent: async sent => {
      await record({
        invitationId: row.id,
        position: item.position,
        status: sent.status,
        idpInvitationId: sent.idpInvitationId ?? null,
        linkSealed: sent.linkSealed ?? null,
        now: sent.now
      })
    }
  })
  return 'settled'
}

/** Settles a queued row without an e-mail (cancelled, failed for good, or sent by someone else). */
async function settle (
  ctx: InvitationContext, c: ChunkOf, item: BatchItem, delivery: 'sent' | 'failed' | 'cancelled', message: string | null
): Promise<Outcome> {
  await settleBatchItem(ctx.ports.db, c.batch.id, item.position, delivery, message)
  if (delivery !== 'sent') await ctx.ports.invitationBudget.refund(c.batch.workspaceId).catch(() => {})
  return 'settled'
}

/** A delivery that threw: cancelled (the provider knows the person), failed for good, or to retry. */
async function notDelivered (ctx: InvitationContext, c: ChunkOf, item: BatchItem, err: unknown): Promise<Outcome> {
  if (isServiceError(err) && err.code === 'USER_EXISTS') return await settle(ctx, c, item, 'cancelled', err.message)
  const message = (err instanceof Error ? err.message : String(err)).slice(0, 500)
  const attempts = await countBatchAttempt(ctx.ports.db, c.batch.id, item.position, message)
  if (attempts >= MAX_ATTEMPTS) return await settle(ctx, c, item, 'failed', message)
  return 'retry'
}

/** One row the one-row way: its lease waited for, or the row settled without an e-mail. */
async function deliverItem (ctx: InvitationContext, c: ChunkOf, item: BatchItem): Promise<Outcome> {
  if (item.invitationId === null) return await settle(ctx, c, item, 'cancelled', 'The invitation is gone')
  const token = randomToken(32)
  try {
    const taken = await claimOne(ctx, item.invitationId, token)
    if ('moved' in taken) return await settleMoved(ctx, c, item, taken.moved)
    try {
      return await sendRow(ctx, c, item, taken.row, token, async send => {
        await recordBatchSends(ctx.ports.db, c.batch.id, taken.lease.owner, [send])
      })
    } finally {
      await taken.lease.release()
    }
  } catch (err) {
    return await notDelivered(ctx, c, item, err)
  }
}

/** Why a row's invitation could not be claimed, other than a busy lease: it needs no e-mail from the chunk. */
type MovedOn = 'delivered' | 'gone'

/** A row that needs no e-mail: sent by another request since the batch was written (one e-mail, not two), or gone. */
async function settleMoved (ctx: InvitationContext, c: ChunkOf, item: BatchItem, moved: MovedOn): Promise<Outcome> {
  return moved === 'delivered'
    ? await settle(ctx, c, item, 'sent', null)
    : await settle(ctx, c, item, 'cancelled', GONE_BEFORE_SENT)
}

/** One invitation's token written with its send lease taken, waited for while another send holds it. */
async function claimOne (ctx: InvitationContext, id: string, token: string): Promise<Acquired<InvitationRow, MovedOn>> {
  const { ports: { db }, ttlMs, sendLeases } = ctx
  const tokenHash = hashToken(token)
  return await sendLeases.acquire<InvitationRow, MovedOn>(async (lease, now) => {
    return await claimBatchInvitation(db, { id, tokenHash, expiresAt: new Date(now.getTime() + ttlMs), lease, now })
  })
}
