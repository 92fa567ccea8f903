import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'

// The Activity screen's Streams panel (issue 55): the audit trail delivered to a SIEM. Add a
// stream, send it a test record, pause and resume it, see its last delivery and its lag.

type Kind = Schemas['AuditStreamKind']
const KINDS: Record<Kind, string> = { splunk: 'Splunk HTTP Event Collector', datadog: 'Datadog logs', https: 'Your HTTPS endpoint' }
const TOKEN_WORDS: Record<Kind, string> = { splunk: 'HEC token', datadog: 'API key', https: '' }
const URL_HINTS: Record<Kind, string> = {
  splunk: 'https://splunk.example.com:8088/services/collector/event',
  datadog: 'https://http-intake.logs.datadoghq.com/api/v2/logs',
  https: 'https://ingest.example.com/audit'
}
const kindWords = (k: string): string => k in KINDS ? KINDS[k as Kind] : k

function state (s: Schemas['AuditStream']): string {
  if (s.status !== 'paused') return 'active'
  return s.pausedReason === 'failing' ? 'paused: the receiver failed for a day' : 'paused'
}

function Stream ({ s, onChanged }: { s: Schemas['AuditStream'], onChanged: (p: Problem | null) => void }) {
  const path = { params: { path: { streamId: s.id } } }
  const paused = s.status === 'paused'
  const test = async () => {
    const r = await call(api.POST('/api/audit-streams/{streamId}/test', path))
    if (r.ok) {
      const answer = r.data.statusCode !== null ? `HTTP ${r.data.statusCode}` : r.data.error ?? 'no answer'
      announce(r.data.delivered ? `${s.name} accepted the test record (${answer}).` : `${s.name} did not accept the test record: ${answer}.`)
    }
    onChanged(r.ok ? null : r.problem)
  }
  const toggle = async () => {
    const r = paused
      ? await call(api.POST('/api/audit-streams/{streamId}/resume', path))
      : await call(api.POST('/api/audit-streams/{streamId}/pause', path))
    if (r.ok) announce(paused ? `${s.name} resumes from where it stopped.` : `${s.name} is paused; nothing is lost meanwhile.`)
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/audit-streams/{streamId}', path))
    if (r.ok) announce(`The stream ${s.name} was deleted.`)
    onChanged(r.ok ? null : r.problem)
  }
  const failing = s.failingSince !== null
  return (
    <li class='card'>
      <p><strong>{s.name}</strong> <span class={paused ? 'tag off' : 'tag'}>{state(s)}</span></p>
      <p class='muted address'>{kindWords(s.kind)}: {s.url}</p>
      <dl>
        <dt>Last delivery</dt><dd>{when(s.lastDeliveryAt)}</dd>
        <dt>Lag</dt><dd>{s.lag === 0 ? 'none' : `${s.lag >= 10_000 ? '10,000 or more' : s.lag} record${s.lag === 1 ? '' : 's'} waiting`}</dd>
        {failing && <><dt>Failing since</dt><dd>{when(s.failingSince)} ({s.lastStatusCode !== null ? `HTTP ${s.lastStatusCode}` : s.lastError ?? 'no answer'})</dd></>}
      </dl>
      <div class='actions'>
        <button type='button' aria-label={`Send a test record to ${s.name}`} onClick={() => { void test() }}>Send a test record</button>
        <button type='button' aria-label={`${paused ? 'Resume' : 'Pause'} ${s.name}`} onClick={() => { void toggle() }}>{paused ? 'Resume' : 'Pause'}</button>
        <ConfirmButton label='Delete' name={`Delete ${s.name}`} confirm='Yes, delete it' onConfirm={remove} />
      </div>
    </li>
  )
}

export function AuditStreams () {
  const { data, problem, reload } = useCall(async () => await call(api.GET('/api/audit-streams')), [])
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const [secret, setSecret] = useState<string | null>(null)
  const [kind, setKind] = useState<Kind>('splunk')
  const [name, setName] = useState('')
  const [url, setUrl] = useState('')
  const [token, setToken] = useState('')
  const add = useFormProblem(['name', 'url', 'token'])
  const create = async (e: Event) => {
    e.preventDefault()
    const body: Schemas['CreateAuditStreamRequest'] = { kind, name: name.trim(), url: url.trim(), ...(kind === 'https' ? {} : { token: token.trim() }) }
    const r = await call(api.POST('/api/audit-streams', { body }))
    add.fail(r.ok ? null : r.problem)
    if (r.ok) {
      setSecret(r.data.secret); setName(''); setUrl(''); setToken('')
      announce(`The stream ${r.data.name} was added${r.data.secret !== null ? ': copy its signing secret now' : ''}.`)
    }
    reload()
  }
  return (
    <section id='streams' class='card' aria-labelledby='streams-title'>
      <h2 id='streams-title'>Streams</h2>
      <p class='muted'>Every record, as it is recorded, to your SIEM: in order, at least once, each as a CloudEvent with its OCSF class.</p>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty='No streams.'>
        <ul class='cards'>
          {data?.items.map(s => <Stream key={s.id} s={s} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
      <button type='button' onClick={reload}>Refresh</button>
      <form onSubmit={create} aria-labelledby='stream-add-title' ref={add.form}>
        <h3 id='stream-add-title'>Add a stream</h3>
        <label for='stream-kind'>Receiver</label>
        <select id='stream-kind' value={kind} onChange={e => { setKind(e.currentTarget.value as Kind) }}>
          {(Object.keys(KINDS) as Kind[]).map(k => <option key={k} value={k}>{KINDS[k]}</option>)}
        </select>
        <label for='stream-name'>Name</label>
        <input id='stream-name' required maxLength={100} value={name} {...add.control('name', 'stream-name')} onInput={e => { setName(e.currentTarget.value) }} />
        {add.error('name', 'stream-name')}
        <label for='stream-url'>URL</label>
        <input id='stream-url' type='url' required maxLength={2000} placeholder={URL_HINTS[kind]} value={url} {...add.control('url', 'stream-url')} onInput={e => { setUrl(e.currentTarget.value) }} />
        {add.error('url', 'stream-url')}
        {kind !== 'https' && (
          <>
            <label for='stream-token'>{TOKEN_WORDS[kind]}</label>
            <input id='stream-token' type='password' autoComplete='off' required maxLength={500} value={token} {...add.control('token', 'stream-token')} onInput={e => { setToken(e.currentTarget.value) }} />
            {add.error('token', 'stream-token')}
          </>
        )}
        <button type='submit'>Add the stream</button>
        {add.note}
      </form>
      {secret !== null && <OnceSecret label='The signing secret' secret={secret} after='Receivers check each batch with it, as webhooks are checked.' onDone={() => { setSecret(null) }} />}
    </section>
  )
}
