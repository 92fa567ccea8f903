import type { Ports } from '../ports/index.js'
import type { Queryable } from '../db/client.js'
import type { Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import { findUserInWorkspace, listActiveAdmins } from '../db/users.js'
import { effectiveRequestStatus, findInviteRequest, type InviteRequestRow } from '../db/invite-requests.js'
import {
  claimDueDigests, findNoticeChannel, holdForDigest, lockNoticeStates, markNoticeSent, recordRequestNotice,
  setNoticeChannel
} from '../db/admin-notices.js'
import type { TellInSlack } from './context.js'
import { requestNoticeEmail } from './notice-email.js'
import { readerFor } from '../emails/reader.js'
import { requireAdmin } from '../lib/require-admin.js'

// Telling admins that invite requests wait (issue 43). Each admin chooses e-mail, Slack (the
// default) or nothing, and hears at most once an hour: the first request after a quiet hour is
// told at once, those after it wait for one digest an hour after that notice. The choice is made
// in the transaction that creates the request (decide), so it exists iff the request does; an
// e-mail is a job of the job engine, the digests are claimed by a scheduled sweep that queues a
// job per digest in the same transaction (as reminders are), so nothing is lost on a restart and
// each request reaches each admin once. Slack's own message (with its buttons) is posted by the
// Slack app to the admins recorded here as told at once in Slack (src/slack/notices.ts).

export type NoticeSettings = components['schemas']['NotificationSettings']

const HOUR_MS = 3_600_000
const BATCH = 200

/** A digest (or one request's notice) for one admin, as the job engine carries it. */
interface NoticeJob { workspaceId: string, userId: string, requestIds: string[], digest: boolean }

export type AdminNoticeDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'log' | 'mailer' | 'jobs'> & {
  /** Posts a digest to the admin in Slack (the Slack app; nothing when it is not installed). */
  tellInSlack: TellInSlack
}

/** In the transaction that created the request: who is told now, who in the next digest. */
export async function decideRequestNotices (
  deps: Pick<Ports, 'jobs'>,
  tx: Queryable,
  request: InviteRequestRow,
  now: Date
): Promise<void> {
  const admins = await listActiveAdmins(tx, request.workspaceId)
  for (const state of await lockNoticeStates(tx, admins.map(a => a.id))) {
    if (state.channel === 'off') continue
    // An hour after the last notice: told now; within it, in the digest due when the hour ends.
    const hourEnds = state.lastNoticeAt === null ? null : new Date(new Date(state.lastNoticeAt).getTime() + HOUR_MS)
    const immediate = hourEnds === null || hourEnds <= now
    if (!await recordRequestNotice(tx, { userId: state.userId, requestId: request.id, immediate, now })) continue
    if (!immediate) {
      await holdForDigest(tx, state.userId, hourEnds)
      continue
    }
    await markNoticeSent(tx, state.userId, now)
    if (state.channel === 'email') {
      const job: NoticeJob = {
        workspaceId: request.workspaceId, userId: state.userId, requestIds: [request.id], digest: false
      }
      await deps.jobs.send(tx, 'admin-notice', job)
      tx.afterCommit?.(() => { deps.jobs.wake('admin-notice') })
    }
  }
}

/** The scheduled sweep: claims each digest that is due and queues its job; returns how many. */
export async function queueDueDigests (deps: Pick<Ports, 'db' | 'clock' | 'jobs'>): Promise<number> {
  let total = 0
  for (;;) {
    const n = await deps.db.transaction(async tx => {
      const due = await claimDueDigests(tx, deps.clock.now(), BATCH)
      const jobs = due.filter(d => d.requestIds.length > 0)
      await deps.jobs.sendMany(tx, 'admin-notice', jobs.map(({ workspaceId, userId, requestIds }): NoticeJob => ({
        workspaceId, userId, requestIds, digest: true
      })))
      if (jobs.length > 0) tx.afterCommit?.(() => { deps.jobs.wake('admin-notice') })
      return due.length
    })
    total += n
    if (n < BATCH) return total
  }
}

function noticeJob (data: unknown): NoticeJob | null {
  const { workspaceId, userId, requestIds, digest } = (data ?? {}) as Partial<NoticeJob>
  if (typeof workspaceId !== 'string' || typeof userId !== 'string' || !Array.isArray(requestIds)) return null
  return { workspaceId, userId, requestIds: requestIds.map(String), digest: digest === true }
}

/** The job: tell one admin of the requests that still wait, by the channel they choose now. A throw retries it. */
export async function sendAdminNotice (deps: AdminNoticeDeps, data: unknown): Promise<void> {
  const job = noticeJob(data)
  if (job === null) return
  const { db } = deps
  const admin = await findUserInWorkspace(db, job.workspaceId, job.userId)
  if (admin === null || admin.status !== 'active' || admin.role !== 'admin') return
  const channel = await findNoticeChannel(db, admin.id)
  const now = deps.clock.now()
  const requests: InviteRequestRow[] = []
  for (const id of job.requestIds) {
    const r = await findInviteRequest(db, job.workspaceId, id)
    // Decided or lapsed since: nothing waits any more.
    if (r !== null && effectiveRequestStatus(r, now) === 'pending') requests.push(r)
  }
  if (requests.length === 0 || channel === 'off') return
  if (channel === 'slack') {
    // At once, Slack's message comes from the Slack app itself; only digests are sent from here.
    if (job.digest) await deps.tellInSlack({ workspaceId: job.workspaceId, adminEmail: admin.email, requests })
    return
  }
  // In the admin's own language, else the workspace's.
  const reader = await readerFor(db, deps.config, job.workspaceId, admin.locale)
  await deps.mailer.send(requestNoticeEmail(reader, {
    to: admin.email,
    requests,
    consoleUrl: `${deps.config.appUrl}/console/requests`
  }))
}

export async function getNoticeSettings (deps: Pick<Ports, 'db'>, actor: Principal): Promise<NoticeSettings> {
  requireAdmin(actor)
  return { inviteRequests: await findNoticeChannel(deps.db, actor.userId) }
}

export async function putNoticeSettings (
  deps: Pick<Ports, 'db'>,
  actor: Principal,
  input: NoticeSettings
): Promise<NoticeSettings> {
  requireAdmin(actor)
  await setNoticeChannel(deps.db, actor.userId, input.inviteRequests)
  return { inviteRequests: input.inviteRequests }
}
