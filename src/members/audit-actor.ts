import type { AuditActor } from '../db/audit-events.js'
import type { Principal } from '../principal.js'

/** Who an audit event names as actor: the person, the API key or the chat bot acting for a person. */
export function auditActorOf (p: Principal): AuditActor {
  switch (p.kind) {
    case 'apiKey': return { type: 'api_key', id: p.apiKeyId, label: p.email }
    case 'chat': return { type: 'chat_platform', id: p.userId, label: p.email }
    default: return { type: 'user', id: p.userId, label: p.email }
  }
}
