import type { AuditAction } from '../db/audit-events.js'

// Every audit action named by its OCSF (Open Cybersecurity Schema Framework, 1.x) class and
// activity, so that a SIEM receiving the audit stream files each record without a parser of ours:
// sign-ins under Authentication, a member's lifecycle under Account Change, a role under User
// Access Management, the workspace's own objects (invitations, keys, endpoints, domains, SSO
// connections, streams) under Entity Management, e-mails under Email Activity. The type is
// class × 100 + activity, as OCSF defines it; the category is the class's thousands.
// test/audit/ocsf.test.ts fails when an action of the contract's AuditAction has no row here, and
// checks docs/audit.md's table against this one.

interface OcsfClass { uid: number, name: string }

const AUTHENTICATION: OcsfClass = { uid: 3002, name: 'Authentication' }
const ACCOUNT_CHANGE: OcsfClass = { uid: 3001, name: 'Account Change' }
const USER_ACCESS: OcsfClass = { uid: 3005, name: 'User Access Management' }
const ENTITY: OcsfClass = { uid: 3004, name: 'Entity Management' }
const EMAIL: OcsfClass = { uid: 4009, name: 'Email Activity' }

/** Activities by id, per class (the OCSF schema's activity_id enums, the ones used here). */
const ACTIVITIES: Record<number, Record<number, string>> = {
  3001: { 1: 'Create', 2: 'Enable', 5: 'Disable', 6: 'Delete' },
  3002: { 1: 'Logon', 2: 'Logoff' },
  3004: { 1: 'Create', 2: 'Read', 3: 'Update', 4: 'Delete', 8: 'Enable', 9: 'Disable', 99: 'Other' },
  3005: { 99: 'Other' },
  4009: { 1: 'Send', 99: 'Other' }
}

export interface OcsfMapping {
  classUid: number
  className: string
  activityId: number
  activityName: string
  categoryUid: number
  typeUid: number
}

type Row = readonly [OcsfClass, number]

const TABLE: Readonly<Partial<Record<AuditAction, Row>>> = {
  'session.login': [AUTHENTICATION, 1],
  'session.logout': [AUTHENTICATION, 2],
  'sso.sign_in_refused': [AUTHENTICATION, 1],
  'sso.break_glass_sign_in': [AUTHENTICATION, 1],
  'member.joined': [ACCOUNT_CHANGE, 1],
  'member.removed': [ACCOUNT_CHANGE, 6],
  'member.suspended': [ACCOUNT_CHANGE, 5],
  'member.reactivated': [ACCOUNT_CHANGE, 2],
  'member.role_changed': [USER_ACCESS, 99],
  'invitation.created': [ENTITY, 1],
  'invitation.resent': [ENTITY, 3],
  'invitation.revoked': [ENTITY, 4],
  'invitation.accepted': [ENTITY, 3],
  'invitation.expired': [ENTITY, 3],
  'invitation.viewed': [ENTITY, 2],
  'invitation.email_failed': [EMAIL, 99],
  'invitation.bounced': [EMAIL, 99],
  'invitation.delivery_delayed': [EMAIL, 99],
  'invitation.bounce_superseded': [EMAIL, 99],
  'invitation.reminder_sent': [EMAIL, 1],
  'api_key.created': [ENTITY, 1],
  'api_key.revoked': [ENTITY, 4],
  'chat.installed': [ENTITY, 1],
  'chat.uninstalled': [ENTITY, 4],
  'invite_request.created': [ENTITY, 1],
  'invite_request.approved': [ENTITY, 3],
  'invite_request.denied': [ENTITY, 3],
  'workspace.settings_changed': [ENTITY, 3],
  'workspace.branding_changed': [ENTITY, 3],
  'webhook_endpoint.created': [ENTITY, 1],
  'webhook_endpoint.updated': [ENTITY, 3],
  'webhook_endpoint.deleted': [ENTITY, 4],
  'webhook_endpoint.secret_rotated': [ENTITY, 3],
  'webhook_endpoint.disabled': [ENTITY, 9],
  'webhook_endpoint.tested': [ENTITY, 99],
  'invite_link.created': [ENTITY, 1],
  'invite_link.regenerated': [ENTITY, 3],
  'invite_link.revoked': [ENTITY, 4],
  'domain.added': [ENTITY, 1],
  'domain.verified': [ENTITY, 3],
  'domain.failed': [ENTITY, 3],
  'domain.removed': [ENTITY, 4],
  'domain.policy_changed': [ENTITY, 3],
  'sso_connection.created': [ENTITY, 1],
  'sso_connection.updated': [ENTITY, 3],
  'sso_connection.deleted': [ENTITY, 4],
  'sso_connection.certificate_expiring': [ENTITY, 99],
  'audit_stream.created': [ENTITY, 1],
  'audit_stream.updated': [ENTITY, 3],
  'audit_stream.deleted': [ENTITY, 4],
  'audit_stream.tested': [ENTITY, 99],
  'audit_stream.paused': [ENTITY, 9],
  'audit_stream.resumed': [ENTITY, 8],
  'audit.records_deleted': [ENTITY, 4]
}

function mappingOf ([cls, activityId]: Row): OcsfMapping {
  return {
    classUid: cls.uid,
    className: cls.name,
    activityId,
    activityName: ACTIVITIES[cls.uid]?.[activityId] ?? 'Other',
    categoryUid: Math.floor(cls.uid / 1000),
    typeUid: cls.uid * 100 + activityId
  }
}

/** The action's OCSF class and activity; null for an action this version does not know. */
export function ocsfOf (action: string): OcsfMapping | null {
  const row = (TABLE as Partial<Record<string, Row>>)[action]
  return row === undefined ? null : mappingOf(row)
}

/** The table as docs/audit.md shows it: one Markdown row per action, in the order given. */
export function ocsfMarkdownTable (actions: readonly string[]): string {
  const lines = ['| Action | OCSF class | Activity | type_uid |', '| --- | --- | --- | --- |']
  for (const action of actions) {
    const m = ocsfOf(action)
    lines.push(m === null
      ? `| \`${action}\` | — | — | — |`
      : `| \`${action}\` | ${m.className} (${m.classUid}) | ${m.activityName} (${m.activityId}) | ${m.typeUid} |`)
  }
  return lines.join('\n')
}
