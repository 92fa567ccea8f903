import { useEffect, useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api.js'
import type { operations } from '../../src/generated/openapi.js'
import type { ScreenProps } from '../main.js'
import { DOORS, ListState, Table, usePaged, when } from '../ui.js'

type Action = Schemas['AuditAction']
const ACTIONS = [
  'invitation.created', 'invitation.resent', 'invitation.revoked', 'invitation.accepted', 'invitation.email_failed',
  'invitation.expired', 'member.joined', 'member.role_changed', 'member.removed', 'api_key.created', 'api_key.revoked',
  'chat.installed', 'chat.uninstalled', 'invite_request.created', 'invite_request.approved', 'invite_request.denied',
  'workspace.settings_changed', 'session.login', 'session.logout', 'webhook_endpoint.created', 'webhook_endpoint.updated',
  'webhook_endpoint.deleted', 'webhook_endpoint.secret_rotated', 'webhook_endpoint.disabled', 'webhook_endpoint.tested'
] as const satisfies readonly Action[]
const complete: Exclude<Action, typeof ACTIONS[number]> extends never ? true : never = true
void complete
type TargetType = NonNullable<NonNullable<operations['getAuditEvents']['parameters']['query']>['targetType']>
const TARGETS: TargetType[] = ['user', 'invitation', 'api_key', 'session', 'chat_installation', 'webhook_endpoint', 'invite_request', 'workspace']

/** A payload value in words: a change ({ from, to }) as "from → to". */
function valueOf (v: unknown): string | null {
  if (typeof v === 'string' || typeof v === 'number') return String(v)
  if (typeof v === 'object' && v !== null && 'from' in v && 'to' in v) return `${String(v.from)} → ${String(v.to)}`
  return null
}

function describe (e: Schemas['AuditEvent']): string {
  const p = e.payload
  return ['email', 'role', 'from', 'to', 'name', 'host', 'url', 'reason', 'invitePolicy']
    .flatMap(k => { const v = valueOf(p[k]); return v === null ? [] : [`${k}: ${v}`] })
    .join(', ')
}

export function Activity ({ news }: ScreenProps) {
  const [action, setAction] = useState<Action | ''>('')
  const [targetType, setTargetType] = useState<TargetType | ''>('')
  const [targetId, setTargetId] = useState('')
  const [applied, setApplied] = useState({ action, targetType, targetId })
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/audit-events', {
      params: {
        query: {
          limit: 25,
          ...(cursor === undefined ? {} : { cursor }),
          ...(applied.action === '' ? {} : { action: applied.action }),
          ...(applied.targetType === '' ? {} : { targetType: applied.targetType }),
          ...(applied.targetId.trim() === '' ? {} : { targetId: applied.targetId.trim() })
        }
      }
    })),
    [applied]
  )
  useEffect(() => { if (news > 0) reload() }, [news])
  return (
    <>
      <form class='card filters' onSubmit={e => { e.preventDefault(); setApplied({ action, targetType, targetId }) }} aria-label='Filters'>
        <div>
          <label for='f-action'>What</label>
          <select id='f-action' value={action} onChange={e => { setAction(e.currentTarget.value as Action | '') }}>
            <option value=''>everything</option>
            {ACTIONS.map(a => <option key={a} value={a}>{a}</option>)}
          </select>
        </div>
        <div>
          <label for='f-target'>Target type</label>
          <select id='f-target' value={targetType} onChange={e => { setTargetType(e.currentTarget.value as TargetType | '') }}>
            <option value=''>any</option>
            {TARGETS.map(a => <option key={a} value={a}>{a}</option>)}
          </select>
        </div>
        <div>
          <label for='f-target-id'>Target id</label>
          <input id='f-target-id' value={targetId} onInput={e => { setTargetId(e.currentTarget.value) }} />
        </div>
        <button type='submit'>Filter</button>
      </form>
      <ListState items={items} problem={problem} retry={reload} empty='Nothing happened yet, or nothing matches.'>
        <Table caption='The audit trail, newest first' heads={['When', 'Who', 'Door', 'Did', 'Details']} pager={pager}>
          {items?.map(e => (
            <tr key={e.id}>
              <td>{when(e.createdAt)}</td>
              <td>{e.actor.label ?? e.actor.type}</td>
              <td class='door'>{DOORS[e.source]}</td>
              <td><code>{e.action}</code></td>
              <td>{describe(e)}</td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
