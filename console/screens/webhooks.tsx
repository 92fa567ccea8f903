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

type EventType = Schemas['EventType']
// The contract's event catalogue (src/generated/catalogues.ts, from the EventType enum): a new event
// type is offered without a change here. `webhook.test` is not subscribed to: it goes to one
// endpoint when an admin sends a test event.
const CATALOGUE = eventTypes.filter(type => type !== 'webhook.test')
const known = (type: string): type is EventType => (eventTypes as readonly string[]).includes(type)

function EventPicker ({ picked, onChange }: { picked: EventType[], onChange: (t: EventType[]) => void }) {
  return (
    <fieldset>
      <legend>Events (none picked: every event)</legend>
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
    if (r.ok) announce(`Delivery of ${d.eventType} queued again.`)
    setRetryProblem(r.ok ? null : r.problem)
    reload()
  }
  return (
    <>
      <ProblemNote problem={retryProblem} />
      <ListState items={items} problem={problem} retry={reload} empty='No deliveries yet.'>
        <Table caption={`Recent deliveries to ${endpoint.url}`} heads={['Event', 'Status', 'Attempts', 'Response', 'Next retry', '']} pager={pager}>
          {items?.map(d => (
            <tr key={d.id}>
              <td>{d.eventType}<br /><span class='muted'>{when(d.createdAt)}</span></td>
              <td>{d.status}</td>
              <td>{d.attempts}</td>
              <td>{d.lastStatusCode ?? '—'}{d.lastError !== null && <span class='muted'> {d.lastError}</span>}</td>
              <td>{when(d.nextAttemptAt)}</td>
              <td>{d.status !== 'pending' && <button type='button' onClick={() => { void retry(d) }}>Retry</button>}</td>
            </tr>
          ))}
        </Table>
      </ListState>
      <button type='button' onClick={reload}>Refresh deliveries</button>
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
    if (r.ok) { onSecret(r.data.secret); announce(`A new signing secret for ${ep.url}: copy it now. The previous one works until ${when(r.data.previousSecretExpiresAt)}.`) }
    onChanged(r.ok ? null : r.problem)
  }
  const test = async () => {
    const r = await call(api.POST('/api/webhook-endpoints/{endpointId}/test', path))
    if (r.ok) {
      announce(`A test event is on its way to ${ep.url}; its delivery is listed below.`)
      setOpen(true)
      setSent(n => n + 1)
    }
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/webhook-endpoints/{endpointId}', path))
    if (r.ok) announce(`The endpoint ${ep.url} was deleted.`)
    onChanged(r.ok ? null : r.problem)
  }
  // At 360 px a 200-character URL wraps inside the card; each button shows a short label and
  // carries the URL in its accessible name ("Edit https://…/hook").
  return (
    <li class='card'>
      <p class='address'><strong>{ep.url}</strong> {ep.enabled ? <span class='tag'>enabled</span> : <span class='tag off'>disabled{ep.disabledReason !== null && ` (${ep.disabledReason})`}</span>}</p>
      {ep.description !== null && <p class='muted'>{ep.description}</p>}
      <p class='muted'>Events: {ep.eventTypes === null || ep.eventTypes.length === 0 ? 'all' : ep.eventTypes.join(', ')}</p>
      <div class='actions'>
        <button type='button' aria-label={`Edit ${ep.url}`} aria-expanded={editing} onClick={() => { setEditing(!editing) }}>Edit</button>
        <button type='button' aria-label={`${ep.enabled ? 'Disable' : 'Enable'} ${ep.url}`} onClick={() => { void patch({ enabled: !ep.enabled }, `${ep.url} is ${ep.enabled ? 'disabled' : 'enabled'}.`) }}>{ep.enabled ? 'Disable' : 'Enable'}</button>
        <button type='button' aria-label={`Send a test event to ${ep.url}`} onClick={() => { void test() }}>Send a test event</button>
        <ConfirmButton label='Rotate the secret' name={`Rotate the secret of ${ep.url}`} confirm='Yes, rotate the secret' danger={false} onConfirm={rotate} />
        <ConfirmButton label='Delete' name={`Delete ${ep.url}`} confirm='Yes, delete it' onConfirm={remove} />
        <button type='button' aria-label={`Deliveries of ${ep.url}`} aria-expanded={open} onClick={() => { setOpen(!open) }}>Deliveries</button>
      </div>
      {editing && (
        <form
          ref={edit.form} onSubmit={async e => {
            e.preventDefault()
            const r = await call(api.PATCH('/api/webhook-endpoints/{endpointId}', { ...path, body: { url, eventTypes: types.length === 0 ? null : types } }))
            edit.fail(r.ok ? null : r.problem)
            if (r.ok) { announce(`${url} saved.`); setEditing(false); onChanged(null) }
          }}
        >
          <label for={`url-${ep.id}`}>URL</label>
          <input id={`url-${ep.id}`} type='url' required value={url} {...edit.control('url', `url-${ep.id}`)} onInput={e => { setUrl(e.currentTarget.value) }} />
          {edit.error('url', `url-${ep.id}`)}
          <EventPicker picked={types} onChange={setTypes} />
          {unknown.length > 0 && (
            <p class='muted'>Also subscribed to {unknown.join(', ')}, which this console does not list: saving keeps only the events picked above.</p>
          )}
          <button type='submit'>Save</button>
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
    if (r.ok) { setSecret(r.data.secret); setUrl(''); setDescription(''); setTypes([]); announce(`Endpoint ${r.data.url} created: copy its signing secret now.`) }
    reload()
  }
  return (
    <>
      <form class='card' onSubmit={create} aria-labelledby='hook-title' ref={add.form}>
        <h2 id='hook-title'>Add an endpoint</h2>
        <label for='hook-url'>URL</label>
        <input id='hook-url' type='url' required maxLength={2000} value={url} {...add.control('url', 'hook-url')} onInput={e => { setUrl(e.currentTarget.value) }} />
        {add.error('url', 'hook-url')}
        <label for='hook-description'>Description (optional)</label>
        <input id='hook-description' maxLength={200} value={description} {...add.control('description', 'hook-description')} onInput={e => { setDescription(e.currentTarget.value) }} />
        {add.error('description', 'hook-description')}
        <EventPicker picked={types} onChange={setTypes} />
        <button type='submit'>Add the endpoint</button>
        {add.note}
      </form>
      {secret !== null && <OnceSecret label='The signing secret' secret={secret} onDone={() => { setSecret(null) }} />}
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty='No webhook endpoints.'>
        <ul class='cards'>
          {data?.items.map(ep => <Endpoint key={ep.id} ep={ep} onSecret={setSecret} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
    </>
  )
}
