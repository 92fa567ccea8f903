import type { HandlerDeps, HandlerGroup } from './types.js'
import { principalOf } from '../src/principal.js'

export function workspaceHandlers (
  { services }: HandlerDeps
): HandlerGroup<'getWorkspace' | 'getWorkspaceSettings' | 'patchWorkspaceSettings' | 'deleteWorkspaceSlack'> {
  const svc = services.workspaceSettings
  return {
    async getWorkspace (request) {
      return await services.workspace.get(principalOf(request))
    },
    async getWorkspaceSettings (request) {
      return await svc.get(principalOf(request))
    },
    async patchWorkspaceSettings (request) {
      return await svc.update(principalOf(request), request.body)
    },
    async deleteWorkspaceSlack (request, reply) {
      await services.slack.uninstall(principalOf(request))
      return await reply.code(204).send()
    }
  }
}
