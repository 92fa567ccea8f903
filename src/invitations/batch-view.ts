import type { components } from '../generated/openapi.js'
import type { Queryable } from '../db/client.js'
import { serviceError } from '../errors.js'
import {
  countBatchItems, findBatch, listBatchItems, type BatchItem, type BatchRow
} from '../db/invitation-batches.js'
import { decodeCursor, encodeCursor, invalidCursor } from '../lib/pagination.js'

// GET /api/invitation-batches/{batchId} (and the answer of the POST): the batch's counts by
// result and by delivery, and one page of its rows in request order. The cursor is the lists'
// one cursor (src/lib/pagination.ts) naming the batch and the last row's position.

export type InvitationBatchView = components['schemas']['InvitationBatch']
type RowView = components['schemas']['InvitationBatchRow']

/** A row as the contract names it: `index` is its position, `retryAfter` in seconds; attempts stay inside. */
function rowView ({ position, retryAfterSeconds, attempts: _, ...same }: BatchItem): RowView {
  // The other fields are the contract's by the same names: one BatchItem gains that the contract lacks fails here.
  const fields: Pick<RowView, keyof typeof same> = same
  return { index: position, retryAfter: retryAfterSeconds, ...fields }
}

/** The position a cursor of this batch names (-1: from the start). Throws VALIDATION_FAILED. */
function afterOf (batchId: string, cursor: string | undefined): number {
  if (cursor === undefined) return -1
  const p = decodeCursor(cursor)
  if (p.id !== batchId) throw invalidCursor()
  return p.createdAt.getTime()
}

export async function batchView (
  q: Queryable, workspaceId: string, batchId: string, page: { limit: number, cursor?: string | undefined }
): Promise<InvitationBatchView> {
  const batch = await findBatch(q, workspaceId, batchId)
  if (batch === null) throw serviceError('NOT_FOUND', ['Invitation batch'])
  return await viewOf(q, batch, page)
}

async function viewOf (
  q: Queryable, batch: BatchRow, page: { limit: number, cursor?: string | undefined }
): Promise<InvitationBatchView> {
  const after = afterOf(batch.id, page.cursor)
  const rows = await listBatchItems(q, batch.id, after, page.limit + 1)
  const shown = rows.slice(0, page.limit)
  const last = shown.at(-1)
  const results = { invited: 0, resent: 0, alreadyMember: 0, invalid: 0, duplicate: 0, overBudget: 0 }
  const delivery = { queued: 0, sent: 0, failed: 0, cancelled: 0 }
  const key = {
    invited: 'invited',
    resent: 'resent',
    already_member: 'alreadyMember',
    invalid: 'invalid',
    duplicate: 'duplicate',
    over_budget: 'overBudget'
  } as const
  for (const c of await countBatchItems(q, batch.id)) {
    results[key[c.result]] += c.n
    if (c.delivery !== null) delivery[c.delivery] += c.n
  }
  return {
    id: batch.id,
    status: batch.status,
    total: batch.total,
    results,
    delivery,
    createdAt: new Date(batch.createdAt).toISOString(),
    completedAt: batch.completedAt === null ? null : new Date(batch.completedAt).toISOString(),
    items: shown.map(rowView),
    // The position rides in the cursor's time field (milliseconds since 1970), the batch in its id.
    nextCursor: rows.length > page.limit && last !== undefined
      ? encodeCursor({ createdAt: new Date(last.position), id: batch.id })
      : null
  }
}
