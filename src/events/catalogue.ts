import type { components } from '../generated/openapi.js'
import type { AuditAction, EventRow, EventType } from '../db/audit-events.js'

/** An event as the contract's Event schema shows it (feed item and webhook body). */
export type EventView = components['schemas']['Event']
type EventData = components['schemas']['EventData']

// Which audit actions are events, and under which name. The audit trail says what happened in
// the service's words (an e-mail failed); the catalogue in an integrator's (a delivery failed).
// Actions not listed (logins, webhook administration) stay in the audit trail only.
const EVENT_OF: Partial<Record<AuditAction, EventType>> = {
  'invitation.created': 'invitation.created',
  'invitation.resent': 'invitation.resent',
  'invitation.accepted': 'invitation.accepted',
  'invitation.revoked': 'invitation.revoked',
  'invitation.expired': 'invitation.expired',
  'invitation.email_failed': 'invitation.delivery_failed',
  'invitation.viewed': 'invitation.viewed',
  'invitation.bounced': 'invitation.bounced',
  'invitation.reminder_sent': 'invitation.reminder_sent',
  'member.joined': 'member.joined',
  'member.role_changed': 'member.role_changed',
  'member.removed': 'member.removed',
  'member.suspended': 'member.suspended',
  'member.reactivated': 'member.reactivated',
  'api_key.created': 'api_key.created',
  'api_key.revoked': 'api_key.revoked',
  'chat.installed': 'chat.installed',
  'chat.uninstalled': 'chat.uninstalled',
  'invite_link.created': 'invite_link.created',
  'invite_link.regenerated': 'invite_link.regenerated',
  'invite_link.revoked': 'invite_link.revoked',
  'invite_request.created': 'invite_request.created',
  'invite_request.approved': 'invite_request.approved',
  'invite_request.denied': 'invite_request.denied',
  'domain.added': 'domain.added',
  'domain.verified': 'domain.verified',
  'domain.failed': 'domain.failed',
  'domain.removed': 'domain.removed',
  'sso_connection.certificate_expiring': 'sso.certificate_expiring'
}

export function eventTypeOf (action: AuditAction): EventType | null {
  return EVENT_OF[action] ?? null
}

// The audit row's target becomes the id field of `data`.
const ID_FIELD: Record<string, keyof EventData> = {
  invitation: 'invitationId',
  user: 'userId',
  api_key: 'apiKeyId',
  chat_installation: 'installationId',
  invite_link: 'inviteLinkId',
  invite_request: 'inviteRequestId',
  domain: 'domainId',
  sso_connection: 'ssoConnectionId'
}

// `data` carries only what the contract's EventData declares: whatever else an audit payload
// holds stays in the trail, and a field added there later is not published by accident.
const DATA_FIELDS: ReadonlySet<string> = new Set<keyof EventData>([
  'invitationId', 'userId', 'apiKeyId', 'installationId', 'inviteRequestId', 'email', 'role', 'from', 'to', 'reason',
  'deliveryStatus', 'revokedSessions', 'revokedApiKeys', 'name', 'prefix', 'platform', 'teamId', 'teamName',
  'scopes', 'reinstall', 'inviteLinkId', 'maxUses', 'expiresAt', 'allowedDomains', 'requiresApproval', 'domain',
  'domainId', 'policy', 'ssoConnectionId', 'fingerprintSha256'
])

const ACTOR_TYPE: Record<EventRow['actorType'], EventView['actor']['type']> = {
  user: 'user',
  api_key: 'api_key',
  chat_platform: 'chat_user',
  system: 'system'
}

export function eventIdOf (auditId: string): string {
  return `evt_${auditId}`
}

export function toEventView (row: EventRow): EventView {
  const data: Record<string, unknown> = {}
  const idField = row.targetType !== null ? ID_FIELD[row.targetType] : undefined
  if (idField !== undefined && row.targetId !== null) data[idField] = row.targetId
  for (const [k, v] of Object.entries(row.payload)) if (DATA_FIELDS.has(k)) data[k] = v
  return {
    id: eventIdOf(row.id),
    type: row.type,
    timestamp: row.createdAt.toISOString(),
    workspaceId: row.workspaceId,
    actor: { type: ACTOR_TYPE[row.actorType] ?? row.actorType, id: row.actorId },
    source: row.source,
    requestId: row.requestId,
    idempotencyKey: row.idempotencyKey,
    data: data as EventData
  }
}
