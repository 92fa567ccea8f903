import type { components } from '../generated/openapi.js'
import type { Principal } from '../principal.js'
import { listSsoConnections, type SsoConnectionRow } from '../db/sso-connections.js'
import {
  connectionOr404, connectionView, type SsoConnectionDeps, type SsoConnectionView
} from './connection-context.js'
import { createConnection, removeConnection, updateConnection } from './connection-change.js'

// A workspace's single sign-on connections (issue 53): OpenID Connect or SAML 2.0 to the
// company's own identity provider, each serving some of the workspace's verified domains. One
// file per part (connection-change.ts, connection-settings.ts, connection-secret.ts) over what
// they share (connection-context.ts). Reached through REST only (admins, or keys with sso:*).

type Schemas = components['schemas']

export interface SsoConnectionService {
  create(actor: Principal, input: Schemas['CreateSsoConnectionRequest']): Promise<SsoConnectionView>
  list(actor: Principal): Promise<SsoConnectionView[]>
  get(actor: Principal, id: string): Promise<SsoConnectionView>
  update(actor: Principal, id: string, change: Schemas['UpdateSsoConnectionRequest']): Promise<SsoConnectionView>
  remove(actor: Principal, id: string): Promise<void>
}

export function createSsoConnectionService (deps: SsoConnectionDeps): SsoConnectionService {
  const view = (row: SsoConnectionRow): SsoConnectionView => connectionView(deps.config.publicUrl, row)
  return {
    create: async (actor, input) => await createConnection(deps, actor, input),
    list: async actor => (await listSsoConnections(deps.db, actor.workspaceId)).map(view),
    get: async (actor, id) => view(await connectionOr404(deps, actor, id)),
    update: async (actor, id, change) => await updateConnection(deps, actor, id, change),
    remove: async (actor, id) => { await removeConnection(deps, actor, id) }
  }
}
