import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { Queryable } from '../db/client.js'
import {
  findDirectorySettings, findInvitePolicy, findReminderDays, findWorkspace, renameWorkspace, updateDirectorySettings,
  updateInvitePolicy, updateReminderDays
} from '../db/workspaces.js'
import { findAuditRetentionDays, updateAuditRetentionDays } from '../db/workspaces.js'
import { findLanguageSettings, updateLanguageSettings } from '../db/workspaces.js'
import { isTimeZone } from '../i18n/locales.js'
import { findActiveInstallationOfWorkspace } from '../db/chat-installations.js'
import { auditPrincipalAction } from '../audit/actor.js'
import { serviceError } from '../errors.js'

// A workspace's settings: its name, who may invite (invitePolicy) and when a pending invitation
// is reminded (invitationReminderDays), which admins change; and,
// read-only, whether Slack is installed and whether single sign-on is set up. Changes are audited
// with the values they replaced, in the same transaction.

type WorkspaceSettings = components['schemas']['WorkspaceSettings']
type WorkspaceSettingsPatch = components['schemas']['WorkspaceSettingsPatch']

export interface WorkspaceSettingsService {
  get(actor: Principal): Promise<WorkspaceSettings>
  update(actor: Principal, patch: WorkspaceSettingsPatch): Promise<WorkspaceSettings>
}

/** The name as stored: surrounding spaces dropped; nothing left is a 400, as at setup. */
function nameOf (name: string): string {
  const trimmed = name.trim()
  if (trimmed === '') {
    const message = 'must have 1 to 200 characters besides spaces'
    const details = { errors: [{ in: 'body', field: 'name', message }] }
    throw serviceError('VALIDATION_FAILED', [`body.name ${message}`], details)
  }
  return trimmed
}

/** An IANA time zone the runtime knows (`Europe/Berlin`), else a 400 in words. */
function checkTimeZone (timeZone: string): void {
  if (isTimeZone(timeZone)) return
  const message = 'must be an IANA time zone such as Europe/Berlin'
  throw serviceError('VALIDATION_FAILED', [`body.timeZone ${message}`], {
    errors: [{ in: 'body', field: 'timeZone', message }]
  })
}

export function createWorkspaceSettingsService (
  { db, clock, events, config }: Pick<Ports, 'db' | 'clock' | 'events' | 'config'>
): WorkspaceSettingsService {
  async function read (q: Queryable, actor: Principal): Promise<WorkspaceSettings> {
    // One after another: `q` may be a transaction's one connection.
    const workspace = await findWorkspace(q, actor.workspaceId)
    const invitePolicy = await findInvitePolicy(q, actor.workspaceId)
    const reminderDays = await findReminderDays(q, actor.workspaceId)
    const slack = await findActiveInstallationOfWorkspace(q, 'slack', actor.workspaceId)
    const directory = await findDirectorySettings(q, actor.workspaceId)
    const auditRetentionDays = await findAuditRetentionDays(q, actor.workspaceId)
    const language = await findLanguageSettings(q, actor.workspaceId)
    if (workspace === null || invitePolicy === null || reminderDays === undefined || directory === undefined ||
      auditRetentionDays === undefined) {
      throw workspaceGone()
    }
    return {
      name: workspace.name,
      invitePolicy,
      invitationReminderDays: reminderDays,
      slack: {
        available: config.slack !== null,
        installed: slack !== null,
        teamName: slack?.teamName ?? null,
        installedAt: slack?.updatedAt.toISOString() ?? null
      },
      identityProvider: {
        available: config.workos !== null, organizationLinked: workspace.workosOrganizationId !== null
      },
      directory,
      auditRetentionDays,
      ...language
    }
  }
  return {
    get: async actor => await read(db, actor),
    async update (actor, patch) {
      const name = patch.name !== undefined ? nameOf(patch.name) : undefined
      if (patch.timeZone !== undefined) checkTimeZone(patch.timeZone)
      return await db.transaction(async tx => {
        const changed: Record<string, { from: string | number | null, to: string | number | null }> = {}
        if (name !== undefined) {
          const previous = await renameWorkspace(tx, actor.workspaceId, name)
          if (previous === null) throw workspaceGone()
          if (previous !== name) changed.name = { from: previous, to: name }
        }
        if (patch.invitePolicy !== undefined) {
          const previous = await updateInvitePolicy(tx, actor.workspaceId, patch.invitePolicy)
          if (previous === null) throw workspaceGone()
          if (previous !== patch.invitePolicy) changed.invitePolicy = { from: previous, to: patch.invitePolicy }
        }
        const days = patch.invitationReminderDays
        if (days !== undefined) {
          const previous = await updateReminderDays(tx, actor.workspaceId, days)
          if (previous === undefined) throw workspaceGone()
          if (previous !== days) changed.invitationReminderDays = { from: previous, to: days }
        }
        const retention = patch.auditRetentionDays
        if (retention !== undefined) {
          const previous = await updateAuditRetentionDays(tx, actor.workspaceId, retention)
          if (previous === undefined) throw workspaceGone()
          if (previous !== retention) changed.auditRetentionDays = { from: previous, to: retention }
        }
        if (patch.locale !== undefined || patch.timeZone !== undefined) {
          const previous = await updateLanguageSettings(tx, actor.workspaceId, {
            ...(patch.locale !== undefined ? { locale: patch.locale } : {}),
            ...(patch.timeZone !== undefined ? { timeZone: patch.timeZone } : {})
          })
          if (previous === undefined) throw workspaceGone()
          if (patch.locale !== undefined && previous.locale !== patch.locale) {
            changed.locale = { from: previous.locale, to: patch.locale }
          }
          if (patch.timeZone !== undefined && previous.timeZone !== patch.timeZone) {
            changed.timeZone = { from: previous.timeZone, to: patch.timeZone }
          }
        }
        if (patch.directory !== undefined) {
          const adminGroup = patch.directory.adminGroup?.trim()
          const previous = await updateDirectorySettings(tx, actor.workspaceId, {
            ...(adminGroup !== undefined ? { adminGroup: adminGroup === '' ? null : adminGroup } : {}),
            ...(patch.directory.adminGroup === null ? { adminGroup: null } : {}),
            ...(patch.directory.welcomeEmail !== undefined ? { welcomeEmail: patch.directory.welcomeEmail } : {})
          })
          if (previous === undefined) throw workspaceGone()
          const now = await findDirectorySettings(tx, actor.workspaceId)
          if (now !== undefined && now.adminGroup !== previous.adminGroup) {
            changed.directoryAdminGroup = { from: previous.adminGroup, to: now.adminGroup }
          }
          if (now !== undefined && now.welcomeEmail !== previous.welcomeEmail) {
            changed.directoryWelcomeEmail = { from: String(previous.welcomeEmail), to: String(now.welcomeEmail) }
          }
        }
        if (Object.keys(changed).length > 0) {
          await auditPrincipalAction(events, tx, actor, {
            action: 'workspace.settings_changed',
            target: { type: 'workspace', id: actor.workspaceId },
            payload: changed,
            now: clock.now()
          })
        }
        return await read(tx, actor)
      })
    }
  }
}
