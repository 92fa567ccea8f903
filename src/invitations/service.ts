import type { Principal } from '../principal.js'
import type { Role } from '../db/users.js'
import type { JobEngine } from '../ports/job-engine.js'
import type { Idempotency, IdempotencyKeyOf } from '../idempotency/idempotency.js'
import { emailAddress } from '../lib/email.js'
import { requireMayInvite } from '../workspaces/invite-policy.js'
import type { IdentityProviderInvitations } from '../idp/invitations.js'
import type { InviteResult } from './delivery.js'
import { createInvitationContext, type InvitationPorts } from './context.js'
import { inviteMember } from './invite.js'
import { resendInvitation } from './resend.js'
import { revokeInvitation } from './revoke.js'
import { listInvitationPage, type InvitationListQuery, type InvitationView } from './view.js'
import { funnelOf, type InvitationFunnel } from './funnel.js'
import { classifyRows, createBatch, type BatchInput } from './batch.js'
import { batchView, type InvitationBatchView } from './batch-view.js'
import { abandonBatchChunk, deliverBatchChunk } from './batch-delivery.js'

/** A batch this small is answered with all its rows (201); a larger one with its first page (202). */
export const SMALL_BATCH = 25
const FIRST_PAGE = 50

// The invitation operations, one file each (invite.ts, resend.ts, revoke.ts, view.ts), over
// the context they share (context.ts: identity provider, send lease, budgeted delivery).

export interface InvitationService {
  /**
   * Invite (or re-invite) an e-mail into the actor's workspace. Throws registry errors. Draws on
   * the workspace's invitation-e-mail budget, except for a replay of an Idempotency-Key. With
   * `idempotency`, the key's semantics (src/idempotency) over the normalized input.
   */
  invite(actor: Principal, input: {
    email: string,
    role: Role,
    /** The invitee's language (BCP 47); absent, the workspace's. */
    locale?: string | undefined
  }, opts?: { idempotency?: IdempotencyKeyOf }): Promise<InviteResult>
  list(actor: Principal, q: InvitationListQuery): Promise<{ items: InvitationView[], nextCursor: string | null }>
  /** Fresh token and expiry for a pending invitation, and send it again. */
  resend(actor: Principal, invitationId: string): Promise<InviteResult>
  revoke(actor: Principal, invitationId: string): Promise<InvitationView>
  /** The workspace's funnel over a period (ISO date-times as the contract admits them). */
  funnel(actor: Principal, q: { since?: string | undefined, until?: string | undefined }): Promise<InvitationFunnel>
  /**
   * Invite many at once (batch.ts): every row's result, the e-mails queued for the job engine.
   * Answers the batch with its first page of rows. With `idempotency`, the key's semantics over
   * the normalized rows: a replay answers the first answer, the rows are not invited twice.
   */
  inviteMany(
    actor: Principal, input: BatchInput, opts?: { idempotency?: IdempotencyKeyOf }
  ): Promise<InvitationBatchView>
  batch(actor: Principal, batchId: string, page: { limit: number, cursor?: string }): Promise<InvitationBatchView>
  /** The job engine's handler of a batch's delivery chunk. */
  deliverBatchChunk(data: unknown): Promise<void>
  /** The handler of a chunk whose job spent its retries (the dead letter queue). */
  abandonBatchChunk(data: unknown): Promise<void>
}

export function createInvitationService (
  deps: InvitationPorts & { jobs: JobEngine, idempotency: Idempotency, idp?: IdentityProviderInvitations }
): InvitationService {
  const { idempotency, idp, jobs, ...ports } = deps
  const ctx = createInvitationContext(ports, idp)
  const firstPage = async (actor: Principal, batchId: string): Promise<InvitationBatchView> =>
    await batchView(ports.db, actor.workspaceId, batchId, { limit: FIRST_PAGE })
  return {
    async invite (actor, input, opts = {}) {
      // The last gate before the mailer, whoever calls (REST, MCP, the chat bot): one rule.
      const email = emailAddress(input.email)
      const role = input.role
      // A member invites only as the workspace's invite policy allows (admins always may).
      await requireMayInvite(ports.db, actor, role)
      const keyed = opts.idempotency
      const invitee = { email, role, locale: input.locale ?? null }
      if (keyed === undefined) return await inviteMember(ctx, actor, invitee)
      // "The same body" is the normalized input: `A@X.example` and `a@x.example` are one request.
      return await idempotency.run(
        { principal: actor, ...keyed, request: [email, role, ...(input.locale !== undefined ? [input.locale] : [])] },
        async attempt => await inviteMember(ctx, actor, invitee, { key: keyed.key, attempt })
      )
    },
    list: async (actor, q) => await listInvitationPage(ports, actor, q),
    resend: async (actor, invitationId) => await resendInvitation(ctx, actor, invitationId),
    revoke: async (actor, invitationId) => await revokeInvitation(ctx, actor, invitationId),
    funnel: async (actor, q) => await funnelOf(ports, actor, q),
    async inviteMany (actor, input, opts = {}) {
      const drafts = classifyRows(input)
      const keyed = opts.idempotency
      if (keyed === undefined) return await firstPage(actor, await createBatch({ ...ctx, jobs }, actor, drafts))
      const request = drafts.map(d => d.locale === null ? [d.email, d.role] : [d.email, d.role, d.locale])
      return await idempotency.run({ principal: actor, ...keyed, request }, async attempt => {
        // The earlier run committed its batch and died before answering: that batch is the answer.
        const earlier = (attempt.uncertain as { batchId?: unknown } | null)?.batchId
        if (typeof earlier === 'string') return await firstPage(actor, earlier)
        return await firstPage(actor, await createBatch({ ...ctx, jobs }, actor, drafts, { key: keyed.key, attempt }))
      })
    },
    batch: async (actor, batchId, page) => await batchView(ports.db, actor.workspaceId, batchId, page),
    deliverBatchChunk: async data => { await deliverBatchChunk(ctx, data) },
    abandonBatchChunk: async data => { await abandonBatchChunk(ctx, data) }
  }
}
