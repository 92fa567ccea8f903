import { X509Certificate } from 'node:crypto'
import type { Ports } from '../ports/index.js'
import { systemActor } from '../audit/actor.js'
import { findSsoConnection } from '../db/sso-connections.js'
import {
  listPinnedCertificates, recordCertificateNotice, type PinnedCertificatesRow
} from '../db/sso-certificate-notices.js'
import { findUserInWorkspace, listActiveAdmins } from '../db/users.js'
import { certificateNoticeEmail } from './certificate-email.js'
import { readerFor } from '../emails/reader.js'

// A SAML connection's IdP signs with a certificate that expires; around then the provider signs
// with a new one, and sign-in accepts only the certificates pinned on the connection. So the
// admins are told ahead (issue 53): when the LAST of the connection's pinned certificates to
// expire is within 30 days, again within 7, and once it has expired. An older certificate that
// expires while a newer one is pinned is a rotation under way, not news. Each stage is told once
// per certificate (a row of sso_certificate_notices, written with the audit event
// sso_connection.certificate_expiring, whose event is sso.certificate_expiring), and each
// active admin gets an e-mail — a job per admin queued in the same transaction, so a restart
// loses none and sends none twice. The sweep runs hourly; a stage crossed while the service was
// down is told at its next run (the latest stage only: 5 days left tells "7 days", not also "30").

const DAY_MS = 86_400_000
/** Days before expiry each stage begins, latest first. */
const STAGES = [0, 7, 30] as const
const PAGE = 500

export type CertificateNoticeDeps = Pick<Ports, 'db' | 'clock' | 'config' | 'events' | 'jobs' | 'mailer' | 'log'>

interface Latest { pem: string, fingerprint: string, notAfter: Date }

/** The pinned certificate that expires last (unreadable ones are skipped: they were checked when pinned). */
function latestOf (pems: readonly string[]): Latest | null {
  let latest: Latest | null = null
  for (const pem of pems) {
    try {
      const c = new X509Certificate(pem)
      const notAfter = new Date(c.validTo)
      if (latest === null || notAfter > latest.notAfter) latest = { pem, fingerprint: c.fingerprint256, notAfter }
    } catch {}
  }
  return latest
}

/** Whole days left (rounded up: 29.2 days is "30 days"), 0 or less once expired. */
function daysLeft (notAfter: Date, now: Date): number {
  return Math.ceil((notAfter.getTime() - now.getTime()) / DAY_MS)
}

function stageOf (days: number): number | null {
  return STAGES.find(stage => days <= stage) ?? null
}

interface NoticeJob { workspaceId: string, connectionId: string, fingerprint: string, userId: string }

async function tellConnection (deps: CertificateNoticeDeps, row: PinnedCertificatesRow, now: Date): Promise<boolean> {
  const latest = latestOf(row.certificates)
  if (latest === null) return false
  const days = daysLeft(latest.notAfter, now)
  const stage = stageOf(days)
  if (stage === null) return false
  return await deps.db.transaction(async tx => {
    if (!await recordCertificateNotice(tx, { connectionId: row.id, fingerprint: latest.fingerprint, stage, now })) {
      return false
    }
    await deps.events.record(tx, {
      workspaceId: row.workspaceId,
      action: 'sso_connection.certificate_expiring',
      actor: systemActor('sso'),
      target: { type: 'sso_connection', id: row.id },
      payload: {
        name: row.name, fingerprintSha256: latest.fingerprint, expiresAt: latest.notAfter.toISOString(), daysLeft: days
      },
      now
    })
    const admins = await listActiveAdmins(tx, row.workspaceId)
    await deps.jobs.sendMany(tx, 'sso-certificate-notice', admins.map((a): NoticeJob => ({
      workspaceId: row.workspaceId, connectionId: row.id, fingerprint: latest.fingerprint, userId: a.id
    })))
    if (admins.length > 0) tx.afterCommit?.(() => { deps.jobs.wake('sso-certificate-notice') })
    return true
  })
}

/** The sweep: every SAML connection, a page at a time; returns how many notices were given. */
export async function noticeExpiringCertificates (deps: CertificateNoticeDeps): Promise<number> {
  const now = deps.clock.now()
  let told = 0
  let after: string | null = null
  for (;;) {
    const page = await listPinnedCertificates(deps.db, after, PAGE)
    for (const row of page) {
      if (await tellConnection(deps, row, now)) told++
    }
    if (page.length < PAGE) break
    after = page[page.length - 1]?.id ?? null
  }
  if (told > 0) deps.log.info({ told }, 'SSO certificate expiry notices given')
  return told
}

function noticeJob (data: unknown): NoticeJob | null {
  const { workspaceId, connectionId, fingerprint, userId } = (data ?? {}) as Partial<NoticeJob>
  if (typeof workspaceId !== 'string' || typeof connectionId !== 'string' ||
    typeof fingerprint !== 'string' || typeof userId !== 'string') return null
  return { workspaceId, connectionId, fingerprint, userId }
}

/**
 * The job: e-mail one admin, unless it no longer applies (the admin left or was demoted, the
 * connection was deleted, or the certificate is no longer the last to expire: a newer one was
 * pinned meanwhile). A throw (the relay down) retries it.
 */
export async function sendCertificateNotice (deps: CertificateNoticeDeps, data: unknown): Promise<void> {
  const job = noticeJob(data)
  if (job === null) return
  const admin = await findUserInWorkspace(deps.db, job.workspaceId, job.userId)
  if (admin === null || admin.status !== 'active' || admin.role !== 'admin') return
  const connection = await findSsoConnection(deps.db, job.workspaceId, job.connectionId)
  const latest = connection?.saml == null ? null : latestOf(connection.saml.certificates)
  if (connection === null || latest === null || latest.fingerprint !== job.fingerprint) return
  // In the admin's own language, else the workspace's; the date in the workspace's time zone.
  const reader = await readerFor(deps.db, deps.config, job.workspaceId, admin.locale)
  await deps.mailer.send(certificateNoticeEmail(reader, {
    to: admin.email,
    connectionName: connection.name,
    fingerprintSha256: latest.fingerprint,
    expiresAt: latest.notAfter,
    daysLeft: daysLeft(latest.notAfter, deps.clock.now()),
    consoleUrl: `${deps.config.appUrl}/console/sso`
  }))
}
