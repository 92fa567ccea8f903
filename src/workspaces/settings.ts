import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import type { Queryable } from '../db/client.js'
import {
  findDirectorySettings, findInvitePolicy, findReminderDays, findWorkspace, renameWorkspace, updateDirectorySettings,
  updateInvitePolicy, updateReminderDays
} from '../db/workspaces.js'
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
    if (workspace === null || invitePolicy === null || reminderDays === undefined || directory === undefined) {
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
      directory
    }
  }
  return {
    get: async actor => await read(db, actor),
    async update (actor, patch) {
      const name = patch.name !== undefined ? nameOf(patch.name) : undefined
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
