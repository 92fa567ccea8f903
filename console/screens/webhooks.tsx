import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { usePaged } from '../hooks/use-paged.js'
import { eventTypes } from '../../src/generated/catalogues.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-webhooks.json'

const { t } = screenWordsOf<typeof own>('webhooks')

type EventType = Schemas['EventType']
// The contract's event catalogue (src/generated/catalogues.ts, from the EventType enum): a new event
// type is offered without a change here. `webhook.test` is not subscribed to: it goes to one
// endpoint when an admin sends a test event.
const CATALOGUE = eventTypes.filter(type => type !== 'webhook.test')
const known = (type: string): type is EventType => (eventTypes as readonly string[]).includes(type)

function EventPicker ({ picked, onChange }: { picked: EventType[], onChange: (t: EventType[]) => void }) {
  return (
    <fieldset>
      <legend>{t('eventsLegend')}</legend>
      <div class='checks'>
        {CATALOGUE.map(type => (
          <label key={type} class='check'>
            <input
              type='checkbox' checked={picked.includes(type)}
              onChange={e => { onChange(e.currentTarget.checked ? [...picked, type] : picked.filter(p => p !== type)) }}
            /> {type}
          </label>
        ))}
      </div>
    </fieldset>
  )
}

function Deliveries ({ endpoint, refreshed }: { endpoint: Schemas['WebhookEndpoint'], refreshed: number }) {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/webhook-endpoints/{endpointId}/deliveries', {
      params: { path: { endpointId: endpoint.id }, query: cursor === undefined ? { limit: 10 } : { limit: 10, cursor } }
    })),
    [endpoint.id, refreshed]
  )
  const [retryProblem, setRetryProblem] = useState<Problem | null>(null)
  const retry = async (d: Schemas['WebhookDelivery']) => {
    const r = await call(api.POST('/api/webhook-deliveries/{deliveryId}/retry', { params: { path: { deliveryId: d.id } } }))
    if (r.ok) announce(t('retried', { event: d.eventType }))
    setRetryProblem(r.ok ? null : r.problem)
    reload()
  }
  return (
    <>
      <ProblemNote problem={retryProblem} />
      <ListState items={items} problem={problem} retry={reload} empty={t('noDeliveries')}>
        <Table caption={t('deliveriesTo', { url: endpoint.url })} heads={[t('headEvent'), t('headStatus'), t('headAttempts'), t('headResponse'), t('headNextRetry'), '']} pager={pager}>
          {items?.map(d => (
            <tr key={d.id}>
              <td>{d.eventType}<br /><span class='muted'>{when(d.createdAt)}</span></td>
              <td>{t('deliveryStatus', { status: d.status })}</td>
              <td>{d.attempts}</td>
              <td>{d.lastStatusCode ?? '—'}{d.lastError !== null && <span class='muted'> {d.lastError}</span>}</td>
              <td>{when(d.nextAttemptAt)}</td>
              <td>{d.status !== 'pending' && <button type='button' onClick={() => { void retry(d) }}>{t('retry')}</button>}</td>
            </tr>
          ))}
        </Table>
      </ListState>
      <button type='button' onClick={reload}>{t('refreshDeliveries')}</button>
    </>
  )
}

function Endpoint ({ ep, onChanged, onSecret }: { ep: Schemas['WebhookEndpoint'], onChanged: (p: Problem | null) => void, onSecret: (s: string) => void }) {
  const [open, setOpen] = useState(false)
  const [editing, setEditing] = useState(false)
  const [sent, setSent] = useState(0)
  const [url, setUrl] = useState(ep.url)
  // An endpoint's subscriptions are open (a newer service may have subscribed it to events this
  // console does not list): they are shown by name, and the editor says what saving keeps.
  const [types, setTypes] = useState<EventType[]>((ep.eventTypes ?? []).filter(known))
  const unknown = (ep.eventTypes ?? []).filter(type => !known(type))
  const edit = useFormProblem(['url', 'eventTypes'])
  const path = { params: { path: { endpointId: ep.id } } }
  const patch = async (body: Schemas['UpdateWebhookEndpointRequest'], said: string) => {
    const r = await call(api.PATCH('/api/webhook-endpoints/{endpointId}', { ...path, body }))
    if (r.ok) announce(said)
    onChanged(r.ok ? null : r.problem)
  }
  const rotate = async () => {
    const r = await call(api.POST('/api/webhook-endpoints/{endpointId}/rotate-secret', path))
    if (r.ok) { onSecret(r.data.secret); announce(t('rotated', { url: ep.url, when: when(r.data.previousSecretExpiresAt) })) }
    onChanged(r.ok ? null : r.problem)
  }
  const test = async () => {
    const r = await call(api.POST('/api/webhook-endpoints/{endpointId}/test', path))
    if (r.ok) {
      announce(t('testSent', { url: ep.url }))
      setOpen(true)
      setSent(n => n + 1)
    }
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/webhook-endpoints/{endpointId}', path))
    if (r.ok) announce(t('deleted', { url: ep.url }))
    onChanged(r.ok ? null : r.problem)
  }
  // At 360 px a 200-character URL wraps inside the card; each button shows a short label and
  // carries the URL in its accessible name ("Edit https://…/hook").
  return (
    <li class='card'>
      <p class='address'><strong>{ep.url}</strong> {ep.enabled ? <span class='tag'>{t('enabled')}</span> : <span class='tag off'>{ep.disabledReason === null ? t('disabled') : t('disabledBecause', { why: ep.disabledReason, reason: ep.disabledReason })}</span>}</p>
      {ep.description !== null && <p class='muted'>{ep.description}</p>}
      <p class='muted'>{ep.eventTypes === null || ep.eventTypes.length === 0 ? t('eventsAll') : t('eventsList', { types: ep.eventTypes.join(', ') })}</p>
      <div class='actions'>
        <button type='button' aria-label={t('editUrl', { url: ep.url })} aria-expanded={editing} onClick={() => { setEditing(!editing) }}>{t('edit')}</button>
        <button type='button' aria-label={t(ep.enabled ? 'disableUrl' : 'enableUrl', { url: ep.url })} onClick={() => { void patch({ enabled: !ep.enabled }, t(ep.enabled ? 'nowDisabled' : 'nowEnabled', { url: ep.url })) }}>{t(ep.enabled ? 'disable' : 'enable')}</button>
        <button type='button' aria-label={t('sendTestTo', { url: ep.url })} onClick={() => { void test() }}>{t('sendTest')}</button>
        <ConfirmButton label={t('rotate')} name={t('rotateOf', { url: ep.url })} confirm={t('yesRotate')} danger={false} onConfirm={rotate} />
        <ConfirmButton label={t('delete')} name={t('deleteUrl', { url: ep.url })} confirm={t('yesDelete')} onConfirm={remove} />
        <button type='button' aria-label={t('deliveriesOf', { url: ep.url })} aria-expanded={open} onClick={() => { setOpen(!open) }}>{t('deliveries')}</button>
      </div>
      {editing && (
        <form
          ref={edit.form} onSubmit={async e => {
            e.preventDefault()
            const r = await call(api.PATCH('/api/webhook-endpoints/{endpointId}', { ...path, body: { url, eventTypes: types.length === 0 ? null : types } }))
            edit.fail(r.ok ? null : r.problem)
            if (r.ok) { announce(t('saved', { url })); setEditing(false); onChanged(null) }
          }}
        >
          <label for={`url-${ep.id}`}>{t('url')}</label>
          <input id={`url-${ep.id}`} type='url' required value={url} {...edit.control('url', `url-${ep.id}`)} onInput={e => { setUrl(e.currentTarget.value) }} />
          {edit.error('url', `url-${ep.id}`)}
          <EventPicker picked={types} onChange={setTypes} />
          {unknown.length > 0 && (
            <p class='muted'>{t('alsoSubscribed', { types: unknown.join(', ') })}</p>
          )}
          <button type='submit'>{t('save')}</button>
          {edit.note}
        </form>
      )}
      {open && <Deliveries endpoint={ep} refreshed={sent} />}
    </li>
  )
}

export function Webhooks () {
  const { data, problem, reload } = useCall(async () => await call(api.GET('/api/webhook-endpoints')), [])
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [url, setUrl] = useState('')
  const [description, setDescription] = useState('')
  const [types, setTypes] = useState<EventType[]>([])
  const add = useFormProblem(['url', 'description', 'eventTypes'])
  const create = async (e: Event) => {
    e.preventDefault()
    const body: Schemas['CreateWebhookEndpointRequest'] = { url: url.trim(), ...(types.length > 0 ? { eventTypes: types } : {}), ...(description.trim() !== '' ? { description: description.trim() } : {}) }
    const r = await call(api.POST('/api/webhook-endpoints', { body }))
    add.fail(r.ok ? null : r.problem)
    if (r.ok) { setSecret(r.data.secret); setUrl(''); setDescription(''); setTypes([]); announce(t('created', { url: r.data.url })) }
    reload()
  }
  return (
    <>
      <form class='card' onSubmit={create} aria-labelledby='hook-title' ref={add.form}>
        <h2 id='hook-title'>{t('addEndpoint')}</h2>
        <label for='hook-url'>{t('url')}</label>
        <input id='hook-url' type='url' required maxLength={2000} value={url} {...add.control('url', 'hook-url')} onInput={e => { setUrl(e.currentTarget.value) }} />
        {add.error('url', 'hook-url')}
        <label for='hook-description'>{t('descriptionOptional')}</label>
        <input id='hook-description' maxLength={200} value={description} {...add.control('description', 'hook-description')} onInput={e => { setDescription(e.currentTarget.value) }} />
        {add.error('description', 'hook-description')}
        <EventPicker picked={types} onChange={setTypes} />
        <button type='submit'>{t('addTheEndpoint')}</button>
        {add.note}
      </form>
      {secret !== null && <OnceSecret label={t('signingSecret')} secret={secret} onDone={() => { setSecret(null) }} />}
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty={t('noEndpoints')}>
        <ul class='cards'>
          {data?.items.map(ep => <Endpoint key={ep.id} ep={ep} onSecret={setSecret} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
    </>
  )
}
