import type { AuditActor, AuditEntry } from '../db/audit-events.js'
import type { Queryable } from '../db/client.js'
import type { EventOutbox } from '../ports/event-outbox.js'
import type { Principal } from '../principal.js'

/**
 * Who an audit event names as actor. The type and id say which door was used (the person's
 * session, an API key, the chat bot acting for a person). A person's label is their e-mail, so one
 * person reads the same in the trail whichever door they used (a display name is neither unique
 * nor stable); a key is its own actor, named by its id and name, through the REST API (`api`) or
 * the MCP endpoint (`mcp`). The session cookie is the browser's (the console, the service's
 * pages), so its door is `web`.
 */
export function auditActorOf (principal: Principal): AuditActor {
  const by = { label: principal.email, requestId: principal.requestId }
  switch (principal.kind) {
    case 'apiKey': {
      const key = principal.key
      const label = key?.name ?? by.label
      return { ...by, label, type: 'api_key', id: principal.apiKeyId, source: key?.door ?? 'api' }
    }
    case 'chat': return { ...by, type: 'chat_platform', id: principal.userId, source: 'chat' }
    case 'session': return { ...by, type: 'user', id: principal.userId, source: 'web' }
  }
}

/**
 * Record what a principal did in its own workspace, in the transaction of the action: the one
 * way services name the actor, so REST, MCP and chat write the same row for the same act (and,
 * through the outbox, the same event).
 */
export async function auditPrincipalAction (
  events: EventOutbox,
  q: Queryable,
  principal: Principal,
  event: Omit<AuditEntry, 'workspaceId' | 'actor'>
): Promise<void> {
  await events.record(q, { ...event, workspaceId: principal.workspaceId, actor: auditActorOf(principal) })
}

/** `auditPrincipalAction` for many acts of one principal in one transaction, written together (a batch). */
export async function auditPrincipalActions (
  events: EventOutbox,
  q: Queryable,
  principal: Principal,
  acts: Array<Omit<AuditEntry, 'workspaceId' | 'actor'>>
): Promise<void> {
  const actor = auditActorOf(principal)
  await events.recordMany(q, acts.map(event => ({ ...event, workspaceId: principal.workspaceId, actor })))
}

/** The service acting on its own (a scheduled job, the delivery engine, a provider's answer). */
export function systemActor (label: string): AuditActor {
  return { type: 'system', id: null, label, source: 'system', requestId: null }
}
