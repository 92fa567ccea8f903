import { insertAuditEvent, type AuditActor, type AuditEntry } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import type { Principal } from '../principal.js'

/**
 * Who an audit event names as actor. The type and id say which door was used (the person's
 * session, an API key, the chat bot acting for a person); the label is always the person's
 * e-mail, so one person reads the same in the trail whichever door they used (a display name is
 * neither unique nor stable).
 */
export function auditActorOf (principal: Principal): AuditActor {
  switch (principal.kind) {
    case 'apiKey': return { type: 'api_key', id: principal.apiKeyId, label: principal.email }
    case 'chat': return { type: 'chat_platform', id: principal.userId, label: principal.email }
    case 'session': return { type: 'user', id: principal.userId, label: principal.email }
  }
}

/**
 * Record what a principal did in its own workspace, in the transaction of the action: the one
 * way services name the actor, so REST, MCP and chat write the same row for the same act.
 */
export async function auditPrincipalAction (
  q: Queryable,
  principal: Principal,
  event: Omit<AuditEntry, 'workspaceId' | 'actor'>
): Promise<void> {
  await insertAuditEvent(q, { ...event, workspaceId: principal.workspaceId, actor: auditActorOf(principal) })
}
