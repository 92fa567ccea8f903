import type { StreamRecordRow } from '../db/audit-streams.js'
import { toAuditEventView, type AuditEventView } from '../audit/view.js'
import { ocsfOf } from '../audit/ocsf.js'

// Each audit record leaves as a CloudEvents 1.0 envelope (JSON format): its id is the record's,
// so a record delivered twice (at least once) carries the same id both times and the receiver
// drops the copy; `data` is the record as GET /api/audit-events shows it; the OCSF class and
// activity ride as extension attributes (lower-case letters and digits, as the spec requires).

export const CLOUDEVENT_TYPE_PREFIX = 'com.workspace-service.audit.'

export interface CloudEvent {
  specversion: '1.0'
  id: string
  source: string
  type: string
  time: string
  datacontenttype: 'application/json'
  subject?: string
  ocsfclassuid?: number
  ocsfactivityid?: number
  ocsfcategoryuid?: number
  ocsftypeuid?: number
  data: AuditEventView
}

/** The producer: the workspace at this service's address. */
export function streamSource (appUrl: string, workspaceId: string): string {
  return `${appUrl}/workspaces/${workspaceId}`
}

/** The action's OCSF class and activity as CloudEvents extension attributes (none for an unknown action). */
type OcsfAttributes = Pick<CloudEvent, 'ocsfclassuid' | 'ocsfactivityid' | 'ocsfcategoryuid' | 'ocsftypeuid'>

export function ocsfAttributes (action: string): OcsfAttributes {
  const ocsf = ocsfOf(action)
  return ocsf === null
    ? {}
    : {
        ocsfclassuid: ocsf.classUid,
        ocsfactivityid: ocsf.activityId,
        ocsfcategoryuid: ocsf.categoryUid,
        ocsftypeuid: ocsf.typeUid
      }
}

export function toCloudEvent (appUrl: string, record: StreamRecordRow): CloudEvent {
  const data = toAuditEventView(record)
  return {
    specversion: '1.0',
    id: record.id,
    source: streamSource(appUrl, record.workspaceId),
    type: CLOUDEVENT_TYPE_PREFIX + record.action,
    time: data.createdAt,
    datacontenttype: 'application/json',
    ...(data.target !== null ? { subject: `${data.target.type}/${data.target.id}` } : {}),
    ...ocsfAttributes(record.action),
    data
  }
}
