import { useState } from 'preact/hooks'
import { api, call, type Schemas } from '../api.js'
import type { operations } from '../../src/generated/openapi.js'
import { DOORS, doorOf, when } from '../format.js'
import { ListState, Table } from '../components/table.js'
import { usePaged } from '../hooks/use-paged.js'
import { auditActions } from '../../src/generated/catalogues.js'
import { ActivityExport } from './activity-export.js'
import type { ExportQuery } from './activity-export-stream.js'
import { AuditStreams } from './audit-streams.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'

const { t } = screenWordsOf<typeof own>('activity')

type Action = Schemas['AuditAction']
type TargetType = NonNullable<NonNullable<operations['getAuditEvents']['parameters']['query']>['targetType']>
const TARGETS = 'user invitation api_key session chat_installation webhook_endpoint invite_request workspace invite_link domain'
  .split(' ') as TargetType[]

/** A payload value in words: a change ({ from, to }) as "from → to". */
function valueOf (v: unknown): string | null {
  if (typeof v === 'string' || typeof v === 'number') return String(v)
  if (typeof v === 'object' && v !== null && 'from' in v && 'to' in v) return `${String(v.from)} → ${String(v.to)}`
  return null
}

/** Payload fields that name what an event concerns, the first present wins: whose role, which key… */
const NAMED_BY = ['email', 'name', 'url', 'host', 'domain', 'teamName'] as const

/** Who or what an event concerns: the person, key, link, endpoint or domain by name, else its kind and id. */
function concerns (e: Schemas['AuditEvent']): string {
  for (const k of NAMED_BY) {
    const v = e.payload[k]
    if (typeof v === 'string' && v !== '') return v
  }
  return e.target === null ? '—' : t('target', { type: e.target.type, id: e.target.id.slice(0, 8) })
}

function describe (e: Schemas['AuditEvent']): string {
  const p = e.payload
  // A role changed is its two roles: "member → admin".
  const change = valueOf({ from: p.from, to: p.to })
  return [
    ...(p.from !== undefined && p.to !== undefined && change !== null ? [change] : []),
    ...['role', 'reason', 'invitePolicy', 'policy', 'name'].flatMap(k => {
      // A name is what the event concerns (that column), unless it is a change of name.
      const v = k === 'name' && typeof p[k] === 'string' ? null : valueOf(p[k])
      return v === null ? [] : [t('detail', { field: k, value: v })]
    })
  ].join(t('detailSep'))
}

type Door = Schemas['Source']
interface Filters { action: Action | '', targetType: TargetType | '', targetId: string, actor: string, source: Door | '', since: string, until: string }
const NO_FILTER: Filters = { action: '', targetType: '', targetId: '', actor: '', source: '', since: '', until: '' }

/** A datetime-local value (the browser's time zone) as the instant the contract takes. */
const instant = (local: string): string => new Date(local).toISOString()

/** The filters other than the time range, as the list and the export both take them. */
function filterQuery ({ action, actor, source, targetType, targetId }: Filters): ExportQuery {
  const all = { action, actor: actor.trim(), source, targetType, targetId: targetId.trim() }
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== ''))
}

/** The filters the export applies, in words, as the form labels them ("Door: web"); '': none. */
const filterWords = (f: Filters): string => Object.entries(filterQuery(f))
  .map(([field, v]) => t('said', { field, value: field === 'source' ? doorOf(v) : v })).join(t('saidSep'))

export function Activity () {
  const [filters, setFilters] = useState<Filters>(NO_FILTER)
  const [applied, setApplied] = useState<Filters>(NO_FILTER)
  const set = <K extends keyof Filters>(key: K, value: Filters[K]) => { setFilters(f => ({ ...f, [key]: value })) }
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/audit-events', {
      params: {
        query: {
          limit: 25,
          ...(cursor === undefined ? {} : { cursor }),
          ...filterQuery(applied),
          ...(applied.since === '' ? {} : { since: instant(applied.since) }),
          ...(applied.until === '' ? {} : { until: instant(applied.until) })
        }
      }
    })),
    [applied]
  )
  return (
    <>
      <form class='card filters' onSubmit={e => { e.preventDefault(); setApplied(filters) }} aria-label={t('filters')}>
        <div>
          <label for='f-action'>{t('what')}</label>
          <select id='f-action' value={filters.action} onChange={e => { set('action', e.currentTarget.value as Action | '') }}>
            <option value=''>{t('everything')}</option>
            {auditActions.map(a => <option key={a} value={a}>{a}</option>)}
          </select>
        </div>
        <div>
          <label for='f-actor'>{t('who')}</label>
          <input id='f-actor' type='email' maxLength={254} value={filters.actor} onInput={e => { set('actor', e.currentTarget.value) }} />
        </div>
        <div>
          <label for='f-source'>{t('door')}</label>
          <select id='f-source' value={filters.source} onChange={e => { set('source', e.currentTarget.value as Door | '') }}>
            <option value=''>{t('any')}</option>
            {(Object.keys(DOORS) as Door[]).map(d => <option key={d} value={d}>{doorOf(d)}</option>)}
          </select>
        </div>
        <div>
          <label for='f-target'>{t('targetType')}</label>
          <select id='f-target' value={filters.targetType} onChange={e => { set('targetType', e.currentTarget.value as TargetType | '') }}>
            <option value=''>{t('any')}</option>
            {TARGETS.map(a => <option key={a} value={a}>{a}</option>)}
          </select>
        </div>
        <div>
          <label for='f-target-id'>{t('targetId')}</label>
          <input id='f-target-id' value={filters.targetId} onInput={e => { set('targetId', e.currentTarget.value) }} />
        </div>
        <div>
          <label for='f-since'>{t('from')}</label>
          <input id='f-since' type='datetime-local' value={filters.since} onInput={e => { set('since', e.currentTarget.value) }} />
        </div>
        <div>
          <label for='f-until'>{t('until')}</label>
          <input id='f-until' type='datetime-local' value={filters.until} onInput={e => { set('until', e.currentTarget.value) }} />
        </div>
        <button type='submit'>{t('filter')}</button>
      </form>
      <ActivityExport filters={filterQuery(applied)} said={filterWords(applied)} listRange={applied.since !== '' || applied.until !== ''} />
      <AuditStreams />
      <ListState items={items} problem={problem} retry={reload} empty={t('empty')}>
        <Table caption={t('caption')} heads={[t('headWhen'), t('headWho'), t('door'), t('headDid'), t('headConcerns'), t('headDetails')]} pager={pager}>
          {items?.map(e => (
            <tr key={e.id}>
              <td>{when(e.createdAt)}</td>
              <td class='address'>{e.actor.label ?? e.actor.type}</td>
              <td class='door'>{doorOf(e.source)}</td>
              <td><code>{e.action}</code></td>
              <td class='concerns address'>{concerns(e)}</td>
              <td>{describe(e)}</td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
