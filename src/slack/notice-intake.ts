import { randomUUID } from 'node:crypto'
import type { Logger } from '../logger.js'
import type { InviteRequestNotice } from '../invite-requests/context.js'
import type { InviterNotice } from '../ports/inviter-notices.js'
import type { EventQueue } from './event-queue.js'

// Notices of changes made through any door are recorded in the durable queue like events (a
// restart picks them up); recording is tracked so that whenIdle and close wait for it. What
// each notice says, and to whom, is notices.ts.

export interface NoticeIntake {
  /** Tell Slack about an invite request's change (after it is committed); never throws. */
  request(notice: InviteRequestNotice): void
  /** Tell an inviter about their invitation (accepted, delivery failed) in a DM; never throws. */
  inviter(notice: InviterNotice): void
  /** Resolves when the queue is empty and every notice is recorded. */
  settle(): Promise<void>
  /** Resolves when every notice is recorded. */
  drain(): Promise<void>
}

export function createNoticeIntake (deps: { queue: EventQueue, log: Logger, configured: boolean }): NoticeIntake {
  const { queue, log, configured } = deps
  const recording = new Set<Promise<unknown>>()
  const track = (work: Promise<unknown>) => {
    const done = work.catch((err: unknown) => {
      log.warn({ err: err instanceof Error ? err.message : err }, 'slack: telling people in Slack failed')
    }).finally(() => recording.delete(done))
    recording.add(done)
  }
  return {
    request (notice) {
      if (!configured) return
      const { request } = notice
      // Each request is created, approved and denied at most once: the id deduplicates.
      track(queue.receive({
        type: 'notice',
        event_id: `notice:${notice.kind}:${request.id}`,
        event: { type: `invite_request.${notice.kind}`, requestId: request.id, workspaceId: request.workspaceId }
      }, {}))
    },
    inviter (notice) {
      if (!configured) return
      // Delivery may fail once per re-send: each failure is its own notice.
      track(queue.receive({
        type: 'notice',
        event_id: `notice:${notice.kind}:${notice.invitationId}:${randomUUID()}`,
        event: { ...notice, type: `invitation.${notice.kind}` }
      }, {}))
    },
    async settle () {
      await queue.whenIdle()
      while (recording.size > 0) {
        await Promise.all([...recording])
        await queue.whenIdle()
      }
    },
    async drain () { await Promise.all([...recording]) }
  }
}
