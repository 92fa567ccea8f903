import type { Ports } from '../ports/index.js'
import { workspaceGone, type Principal } from '../principal.js'
import type { components } from '../generated/openapi.js'
import { findWorkspaceSummary } from '../db/workspaces.js'

// What any member (or an API key) sees of its workspace: GET /api/workspace. A read: no audit.

type WorkspaceSummary = components['schemas']['WorkspaceSummary']

export interface WorkspaceSummaryService {
  get(actor: Principal): Promise<WorkspaceSummary>
}

export function createWorkspaceSummaryService (deps: Pick<Ports, 'db'>): WorkspaceSummaryService {
  return {
    async get (actor) {
      const row = await findWorkspaceSummary(deps.db, actor.workspaceId)
      if (row === null) throw workspaceGone()
      return {
        id: row.id,
        name: row.name,
        createdAt: new Date(row.createdAt).toISOString(),
        memberCount: row.memberCount,
        invitePolicy: row.invitePolicy
      }
    }
  }
}
