import type { AuditStreamKind } from '../db/audit-streams.js'
import { signatureHeader } from '../webhooks/signing.js'
import type { CloudEvent } from './envelope.js'

// One batch as each kind of receiver takes it:
// - https: a JSON array of the envelopes, signed as webhooks are (Standard Webhooks headers; the
//   message id names the batch's first and last record, so a retry of the same batch keeps it);
// - splunk: HTTP Event Collector, one `{"time","source","sourcetype","event"}` object per record,
//   concatenated, with `Authorization: Splunk <token>`;
// - datadog: logs intake v2, a JSON array of log objects (the envelope as the message, which
//   Datadog parses as JSON) with `DD-API-KEY: <key>`.

const SERVICE = 'workspace-service'

export interface StreamRequest { headers: Record<string, string>, body: string }

export function batchRequest (
  kind: AuditStreamKind, credential: string, events: readonly CloudEvent[], nowSeconds: number
): StreamRequest {
  switch (kind) {
    case 'https': {
      const body = JSON.stringify(events)
      const msgId = `auditbatch_${events[0]?.id ?? ''}_${events[events.length - 1]?.id ?? ''}`
      return {
        body,
        headers: {
          'webhook-id': msgId,
          'webhook-timestamp': String(nowSeconds),
          'webhook-signature': signatureHeader([credential], msgId, nowSeconds, body),
          'user-agent': `${SERVICE}-audit-streams`
        }
      }
    }
    case 'splunk':
      return {
        body: events.map(e => JSON.stringify({
          time: Date.parse(e.time) / 1000, source: SERVICE, sourcetype: 'cloudevents:audit', event: e
        })).join('\n'),
        headers: { authorization: `Splunk ${credential}`, 'user-agent': `${SERVICE}-audit-streams` }
      }
    case 'datadog':
      return {
        body: JSON.stringify(events.map(e => ({
          ddsource: SERVICE,
          service: SERVICE,
          ddtags: `ocsf_class_uid:${e.ocsfclassuid ?? 0},action:${e.data.action}`,
          message: JSON.stringify(e)
        }))),
        headers: { 'dd-api-key': credential, 'user-agent': `${SERVICE}-audit-streams` }
      }
  }
}
