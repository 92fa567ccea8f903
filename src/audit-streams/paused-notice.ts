import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import { findAuditStreamById } from '../db/audit-streams.js'
import { findUserInWorkspace, listActiveAdmins } from '../db/users.js'
import { readerFor } from '../emails/reader.js'
import { streamPausedEmail } from './paused-email.js'

// When delivery pauses a stream after a day of failures, each active admin is e-mailed: a job per
// admin queued in the pausing transaction (a restart loses none), each sent unless it no longer
// applies (the admin left or was demoted, the stream was resumed or deleted). A throw retries it.

export type PausedNoticeDeps = Pick<Ports, 'db' | 'jobs' | 'mailer' | 'config'>

interface NoticeJob { workspaceId: string, streamId: string, userId: string }

export async function queuePausedNotices (
  deps: Pick<Ports, 'jobs'>, tx: Queryable, workspaceId: string, streamId: string
): Promise<void> {
  const admins = await listActiveAdmins(tx, workspaceId)
  const notices = admins.map((a): NoticeJob => ({ workspaceId, streamId, userId: a.id }))
  await deps.jobs.sendMany(tx, 'audit-stream-notice', notices)
  if (admins.length > 0) tx.afterCommit?.(() => { deps.jobs.wake('audit-stream-notice') })
}

export async function sendPausedNotice (deps: PausedNoticeDeps, data: unknown): Promise<void> {
  const { workspaceId, streamId, userId } = (data ?? {}) as Partial<NoticeJob>
  if (typeof workspaceId !== 'string' || typeof streamId !== 'string' || typeof userId !== 'string') return
  const admin = await findUserInWorkspace(deps.db, workspaceId, userId)
  if (admin === null || admin.status !== 'active' || admin.role !== 'admin') return
  const s = await findAuditStreamById(deps.db, streamId)
  if (s === null || s.pausedReason !== 'failing') return
  const reader = await readerFor(deps.db, deps.config, workspaceId, admin.locale)
  await deps.mailer.send(streamPausedEmail(reader, {
    to: admin.email,
    streamName: s.name,
    host: new URL(s.url).host,
    failingSince: s.failingSince ?? s.updatedAt,
    lastProblem: s.lastStatusCode !== null ? `HTTP ${s.lastStatusCode}` : s.lastError,
    consoleUrl: `${deps.config.appUrl}/console/activity`
  }))
}
