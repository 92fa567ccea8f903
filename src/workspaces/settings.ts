import type { Ports } from '../ports.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import { findInvitePolicy, updateInvitePolicy } from '../db/workspaces.js'
import { auditPrincipalAction } from '../audit/actor.js'

// A workspace's settings: for now who may invite (invitePolicy). Changes are audited with the
// value they replaced, in the same transaction.

type WorkspaceSettings = components['schemas']['WorkspaceSettings']
type WorkspaceSettingsPatch = components['schemas']['WorkspaceSettingsPatch']

export interface WorkspaceSettingsService {
  get(actor: Principal): Promise<WorkspaceSettings>
  update(actor: Principal, patch: WorkspaceSettingsPatch): Promise<WorkspaceSettings>
}

export function createWorkspaceSettingsService (
  { db, clock, events }: Pick<Ports, 'db' | 'clock' | 'events'>
): WorkspaceSettingsService {
  async function get (actor: Principal): Promise<WorkspaceSettings> {
    const invitePolicy = await findInvitePolicy(db, actor.workspaceId)
    if (invitePolicy === null) throw workspaceGone()
    return { invitePolicy }
  }
  return {
    get,
    async update (actor, patch) {
      const next = patch.invitePolicy
      if (next === undefined) return await get(actor)
      return await db.transaction(async tx => {
        const previous = await updateInvitePolicy(tx, actor.workspaceId, next)
        if (previous === null) throw workspaceGone()
        if (previous !== next) {
          await auditPrincipalAction(events, tx, actor, {
            action: 'workspace.settings_changed',
            target: { type: 'workspace', id: actor.workspaceId },
            payload: { invitePolicy: { from: previous, to: next } },
            now: clock.now()
          })
        }
        return { invitePolicy: next }
      })
    }
  }
}
