import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import type { Problem } from '../api.js'
import { announce } from '../announce.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { useLive } from '../hooks/live.js'
import { fieldErrors } from '../words.js'
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'
import { dayOf, download, fileName, nothingReceived, save, type ExportFormat, type ExportQuery, type Received } from './activity-export-stream.js'

// Activity's Export (issue 55): a range of dates in the admin's time zone (by default the last 30
// days, or everything), NDJSON or CSV, the list's filters applied, and a button that downloads the
// file, counting the records as they arrive and resuming a cut transfer by itself (the reading and
// saving: activity-export-stream.ts). Part of the screen's chunk, not a chunk fetched at the first
// export: a module imported only by import() made esbuild split the chunk every screen shares (Preact
// and the API client) in two, ~0.6 kB more on every screen's first load, for ~1 kB on this one's.

type State =
  | { phase: 'idle' }
  | { phase: 'running', records: number, resuming: boolean }
  | { phase: 'saved', records: number, name: string }
  | { phase: 'stopped', records: number }

const { t } = screenWordsOf<typeof own>()

/** "1,234 records", as the reader's language counts and writes them. */
const count = (n: number): string => t('records', { count: n, n: n.toLocaleString(readerLanguage()) })

/** The instant a date's day begins where the admin is (`days` later), as the contract takes it; null: not a date. */
function startOf (date: string, days = 0): string | null {
  const m = /^(\d{4,6})-(\d\d)-(\d\d)$/.exec(date)
  if (m === null) return null
  const d = new Date(0)
  d.setFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]) + days)
  d.setHours(0, 0, 0, 0)
  return Number.isNaN(d.getTime()) ? null : d.toISOString()
}

/** A refusal of the form's own fields before anything is sent, worded as the service's would be. */
function refusal (fields: Array<'since' | 'until'>): Problem {
  const refused = fieldErrors('VALIDATION_FAILED', { errors: fields.map(field => ({ in: 'query', field })) })
  return { status: 400, code: 'VALIDATION_FAILED', text: refused.map(f => f.words).join(' '), retryAfter: undefined, fields: refused }
}

/**
 * The Export form: `filters` are the list's (applied), `said` them in words ('': none); `listRange`:
 * the list has a time range of its own, which the export does not take (it has its dates).
 */
export function ActivityExport ({ filters, said, listRange }: { filters: ExportQuery, said: string, listRange: boolean }) {
  const { signedOut } = useLive()
  const today = new Date()
  const [from, setFrom] = useState(() => dayOf(new Date(today.getFullYear(), today.getMonth(), today.getDate() - 30)))
  const [to, setTo] = useState(() => dayOf(today))
  const [everything, setEverything] = useState(false)
  const [format, setFormat] = useState<ExportFormat>('ndjson')
  const [state, setState] = useState<State>({ phase: 'idle' })
  const form = useFormProblem(['query.since', 'query.until'])
  // The export under way, and what it received (kept to be saved, or continued, after a stop).
  const running = useRef<{ abort: AbortController, got: Received, query: ExportQuery, format: ExportFormat } | null>(null)
  const cancelButton = useRef<HTMLButtonElement>(null)
  const startButton = useRef<HTMLButtonElement>(null)
  // Leaving the screen ends the export (nothing is saved).
  useEffect(() => () => { const run = running.current; running.current = null; run?.abort.abort() }, [])
  // The focus follows the control that acts next: Cancel while it runs, Download after.
  const busy = state.phase === 'running'
  const wasBusy = useRef(false)
  useLayoutEffect(() => {
    if (busy && !wasBusy.current) cancelButton.current?.focus()
    if (!busy && wasBusy.current && document.activeElement === document.body) startButton.current?.focus()
    wasBusy.current = busy
  }, [busy])

  /** Read (or go on reading) the export in `running`, then save it or say what stopped it. */
  const go = async () => {
    const run = running.current
    if (run === null) return
    setState({ phase: 'running', records: run.got.records, resuming: false })
    const ended = await download(run.got, run.query, run.format, run.abort.signal, resuming => {
      setState({ phase: 'running', records: run.got.records, resuming })
      if (resuming) announce(t('resuming', { records: count(run.got.records) }))
    })
    if (running.current !== run) return // the screen was left
    if (ended === 'done') {
      const name = fileName(run.format, false)
      save(run.got, run.format, name)
      running.current = null
      setState({ phase: 'saved', records: run.got.records, name })
      announce(t('saved', { name, records: count(run.got.records) }))
      return
    }
    if (ended === 'cancelled') {
      running.current = null
      setState({ phase: 'idle' })
      announce(t('cancelled'))
      return
    }
    if (ended.status === 401) signedOut()
    form.fail(ended)
    // What arrived stays: saved as it is, or continued after its last record.
    setState(run.got.records > 0 ? { phase: 'stopped', records: run.got.records } : { phase: 'idle' })
  }

  const start = async (e: Event) => {
    e.preventDefault()
    const since = everything ? undefined : startOf(from)
    const until = everything ? undefined : startOf(to, 1) // the whole of the last day
    if (since === null || until === null) {
      form.fail(refusal([...(since === null ? ['since' as const] : []), ...(until === null ? ['until' as const] : [])]))
      return
    }
    if (since !== undefined && until !== undefined && Date.parse(until) <= Date.parse(since)) {
      form.fail(refusal(['until']))
      return
    }
    form.fail(null)
    const query = { ...filters, ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) }
    running.current = { abort: new AbortController(), got: nothingReceived(), query, format }
    await go()
  }

  const resume = async () => {
    if (running.current === null) return
    form.fail(null)
    running.current.abort = new AbortController()
    await go()
  }

  const savePart = () => {
    const run = running.current
    if (run === null) return
    const name = fileName(run.format, true)
    save(run.got, run.format, name)
    announce(t('saved', { name, records: count(run.got.records) }))
  }

  return (
    <form id='export-form' class='card' ref={form.form} aria-labelledby='export-heading' onSubmit={e => { void start(e) }}>
      <h2 id='export-heading'>{t('export')}</h2>
      <fieldset disabled={busy}>
        <legend>{t('range')}</legend>
        <label class='check'>
          <input type='radio' name='export-range' checked={!everything} onChange={() => { setEverything(false) }} />
          {t('between')}
        </label>
        <label class='check'>
          <input type='radio' name='export-range' checked={everything} onChange={() => { setEverything(true) }} />
          {t('all')}
        </label>
        {!everything && (
          <div class='filters'>
            <div>
              <label for='export-from'>{t('from')}</label>
              <input id='export-from' type='date' value={from} onInput={e => { setFrom(e.currentTarget.value) }} {...form.control('query.since', 'export-from')} />
              {form.error('query.since', 'export-from')}
            </div>
            <div>
              <label for='export-to'>{t('to')}</label>
              <input id='export-to' type='date' value={to} onInput={e => { setTo(e.currentTarget.value) }} {...form.control('query.until', 'export-to')} />
              {form.error('query.until', 'export-to')}
            </div>
          </div>
        )}
      </fieldset>
      <fieldset disabled={busy}>
        <legend>{t('format')}</legend>
        <label class='check'>
          <input type='radio' name='export-format' checked={format === 'ndjson'} aria-describedby='export-ndjson' onChange={() => { setFormat('ndjson') }} />
          NDJSON
        </label>
        <p id='export-ndjson' class='reason'>{t('ndjson')}</p>
        <label class='check'>
          <input type='radio' name='export-format' checked={format === 'csv'} aria-describedby='export-csv' onChange={() => { setFormat('csv') }} />
          CSV
        </label>
        <p id='export-csv' class='reason'>{t('csv')}</p>
      </fieldset>
      <p id='export-filters' class='muted'>
        {said === '' ? t('noFilter') : t('filtersApply', { filters: said })}
        {listRange && ` ${t('notListRange')}`}
      </p>
      <button type='submit' ref={startButton} disabled={busy} aria-describedby='export-filters'>{t('download')}</button>
      {busy && <button type='button' ref={cancelButton} onClick={() => { running.current?.abort.abort() }}>{t('cancel')}</button>}
      {state.phase === 'running' && (
        <p id='export-progress'>
          <progress aria-label={t('inProgress')} />{' '}
          {t(state.resuming ? 'resumingNow' : 'running', { records: count(state.records) })}
        </p>
      )}
      {state.phase === 'saved' && <p id='export-progress'>{t('saved', { name: state.name, records: count(state.records) })}</p>}
      {form.note}
      {state.phase === 'stopped' && (
        <p>
          {t('stopped', { records: count(state.records) })}{' '}
          <button type='button' onClick={() => { void resume() }}>{t('continue')}</button>
          <button type='button' onClick={savePart}>{t('savePart', { records: count(state.records) })}</button>
        </p>
      )}
    </form>
  )
}
