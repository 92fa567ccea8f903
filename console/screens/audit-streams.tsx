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
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'

const { t } = screenWordsOf<typeof own>('activity')

// The Activity screen's Streams panel (issue 55): the audit trail delivered to a SIEM. Add a
// stream, send it a test record, pause and resume it, see its last delivery and its lag.

type Kind = Schemas['AuditStreamKind']
const URL_HINTS: Record<Kind, string> = {
  splunk: 'https://splunk.example.com:8088/services/collector/event',
  datadog: 'https://http-intake.logs.datadoghq.com/api/v2/logs',
  https: 'https://ingest.example.com/audit'
}
/** A receiver in words; one this console does not know by its own name. */
const kindWords = (kind: string): string => t('kind', { kind })

const state = (s: Schemas['AuditStream']): string =>
  t('state', { state: s.status !== 'paused' ? 'active' : s.pausedReason === 'failing' ? 'failing' : 'paused' })
/** What a receiver answered: its HTTP status, else the error. */
const answerOf = (code: number | null, error: string | null): string => code !== null ? `HTTP ${code}` : error ?? t('noAnswer')

/**
 * What the buttons do (audit-streams-actions.ts), fetched at the first of them and kept; a problem
 * when it did not arrive (the connection dropped, or the console was updated), as a screen's.
 */
async function actions (): Promise<typeof import('./audit-streams-actions.js') | Problem> {
  try {
    return await import('./audit-streams-actions.js')
  } catch {
    return { status: 0, code: undefined, text: t('screenLoadFailed', { title: t('streams') }), retryAfter: undefined, fields: [] }
  }
}

function Stream ({ s, onChanged }: { s: Schemas['AuditStream'], onChanged: (p: Problem | null) => void }) {
  const paused = s.status === 'paused'
  const act = async (what: 'test' | 'toggle' | 'delete') => {
    const buttons = await actions()
    onChanged('act' in buttons ? await buttons.act(what, s, answerOf) : buttons)
  }
  const failing = s.failingSince !== null
  const yes = paused ? 'yes' : 'no'
  return (
    <li class='card'>
      <p><strong>{s.name}</strong> <span class={paused ? 'tag off' : 'tag'}>{state(s)}</span></p>
      <p class='muted address'>{t('receiverAt', { kind: kindWords(s.kind), url: s.url })}</p>
      <dl>
        <dt>{t('lastDelivery')}</dt><dd>{when(s.lastDeliveryAt)}</dd>
        <dt>{t('lag')}</dt><dd>{t(s.lag >= 10_000 ? 'lagMany' : 'lagRecords', { count: s.lag, n: Math.min(s.lag, 10_000).toLocaleString(readerLanguage()) })}</dd>
        {failing && <><dt>{t('failingSince')}</dt><dd>{when(s.failingSince)} ({answerOf(s.lastStatusCode, s.lastError)})</dd></>}
      </dl>
      <div class='actions'>
        <button type='button' aria-label={t('sendTestTo', { name: s.name })} onClick={() => { void act('test') }}>{t('sendTest')}</button>
        <button type='button' aria-label={t('toggleName', { paused: yes, name: s.name })} onClick={() => { void act('toggle') }}>{t('toggle', { paused: yes })}</button>
        <ConfirmButton label={t('delete')} name={t('deleteName', { name: s.name })} confirm={t('confirmDelete')} onConfirm={async () => { await act('delete') }} />
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
    const buttons = await actions()
    const added = 'add' in buttons ? await buttons.add(body) : buttons
    if ('secret' in added) {
      add.fail(null)
      setSecret(added.secret); setName(''); setUrl(''); setToken('')
    } else add.fail(added)
    reload()
  }
  return (
    <section id='streams' class='card' aria-labelledby='streams-title'>
      <h2 id='streams-title'>{t('streams')}</h2>
      <p class='muted'>{t('streamsAbout')}</p>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty={t('noStreams')}>
        <ul class='cards'>
          {data?.items.map(s => <Stream key={s.id} s={s} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
      <button type='button' onClick={reload}>{t('refresh')}</button>
      <form onSubmit={create} aria-labelledby='stream-add-title' ref={add.form}>
        <h3 id='stream-add-title'>{t('addStream')}</h3>
        <label for='stream-kind'>{t('receiver')}</label>
        <select id='stream-kind' value={kind} onChange={e => { setKind(e.currentTarget.value as Kind) }}>
          {(Object.keys(URL_HINTS) as Kind[]).map(k => <option key={k} value={k}>{kindWords(k)}</option>)}
        </select>
        <label for='stream-name'>{t('headName')}</label>
        <input id='stream-name' required maxLength={100} value={name} {...add.control('name', 'stream-name')} onInput={e => { setName(e.currentTarget.value) }} />
        {add.error('name', 'stream-name')}
        <label for='stream-url'>{t('url')}</label>
        <input id='stream-url' type='url' required maxLength={2000} placeholder={URL_HINTS[kind]} value={url} {...add.control('url', 'stream-url')} onInput={e => { setUrl(e.currentTarget.value) }} />
        {add.error('url', 'stream-url')}
        {kind !== 'https' && (
          <>
            <label for='stream-token'>{t('token', { kind })}</label>
            <input id='stream-token' type='password' autoComplete='off' required maxLength={500} value={token} {...add.control('token', 'stream-token')} onInput={e => { setToken(e.currentTarget.value) }} />
            {add.error('token', 'stream-token')}
          </>
        )}
        <button type='submit'>{t('add')}</button>
        {add.note}
      </form>
      {secret !== null && <OnceSecret label={t('secret')} secret={secret} after={t('secretAfter')} onDone={() => { setSecret(null) }} />}
    </section>
  )
}
