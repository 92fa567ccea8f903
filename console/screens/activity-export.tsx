import { useRef, useState } from 'preact/hooks'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { useLive } from '../hooks/live.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'
import type { ExportFormat, ExportQuery } from './activity-export-stream.js'
import type { Run, State, Ui } from './activity-export-run.js'

// Activity's Export (issue 55): a range of dates in the admin's time zone (by default the last 30
// days, or everything), NDJSON or CSV, the list's filters applied, and a button that downloads the
// file, counting the records as they arrive and resuming a cut transfer by itself. The form is
// here; what Download does and what the form shows from then on (activity-export-run.tsx, with the
// reading and saving: activity-export-stream.ts) is a chunk of its own, fetched at the first
// Download, not with the screen.

const { t } = screenWordsOf<typeof own>('activity')

/** A day where the admin is, as a date input and a file name write it: 2026-12-07. */
const dayOf = (d: Date): string =>
  [d.getFullYear(), d.getMonth() + 1, d.getDate()].map((n, i) => String(n).padStart(i === 0 ? 4 : 2, '0')).join('-')

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
  const running = useRef<Run | null>(null)
  const startButton = useRef<HTMLButtonElement>(null)
  const busy = state.phase === 'running'

  // What Download does, and what the form shows from then on: fetched at the first Download, kept.
  const [run, setRun] = useState<typeof import('./activity-export-run.js')>()
  const ui: Ui = { running, setState, fail: form.fail, signedOut, dayOf, startButton }
  const start = async () => {
    let loaded
    try {
      loaded = await import('./activity-export-run.js')
    } catch {
      // The connection dropped, or the console was updated: as a screen that did not load.
      form.fail({ status: 0, code: undefined, text: t('screenLoadFailed', { title: t('export') }), retryAfter: undefined, fields: [] })
      return
    }
    setRun(loaded)
    await loaded.start(ui, { filters, everything, from, to, format })
  }

  return (
    <form id='export-form' class='card' ref={form.form} aria-labelledby='export-heading' onSubmit={e => { e.preventDefault(); void start() }}>
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
      {run === undefined ? form.note : <run.Progress ui={ui} state={state} note={form.note} />}
    </form>
  )
}
