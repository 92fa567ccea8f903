import type { JSX, RefObject } from 'preact'
import { useEffect, useLayoutEffect, useRef } from 'preact/hooks'
import type { Problem } from '../api.js'
import { announce } from '../announce.js'
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-activity.json'
import { download, fileName, nothingReceived, refusal, save, startOf, type ExportFormat, type ExportQuery, type Received } from './activity-export-stream.js'

// What the Activity screen's Export form (activity-export.tsx) does once its Download is pressed,
// and what it shows from then on: the count as records arrive, what was saved, what stopped it,
// with Cancel, Continue and Save. A chunk of its own, with the reading and saving
// (activity-export-stream.ts), fetched at the first Download, not with the screen. The build makes
// it import console/common.ts, as every screen does (scripts/lib/console-build.ts): every entry
// then reaches the shared modules it uses, and esbuild does not split their chunk for it.

const { t, tParts } = screenWordsOf<typeof own>('activity')

/** "1,234 records", as the reader's language counts and writes them. */
const count = (n: number): string => t('records', { count: n, n: n.toLocaleString(readerLanguage()) })

export type State =
  | { phase: 'idle' }
  | { phase: 'running', records: number, resuming: boolean }
  | { phase: 'saved', records: number, name: string }
  | { phase: 'stopped', records: number }

/** An export under way, and what it received (kept to be saved, or continued, after a stop). */
export interface Run { abort: AbortController, got: Received, query: ExportQuery, format: ExportFormat }

/** The Export form, as its buttons act on it: its run, its state, its note, its Download. */
export interface Ui {
  running: { current: Run | null }
  setState: (state: State) => void
  fail: (problem: Problem | null) => void
  signedOut: () => void
  startButton: RefObject<HTMLButtonElement | null>
  dayOf: (d: Date) => string
}

/** Read (or go on reading) the export in `running`, then save it or say what stopped it. */
async function go (ui: Ui): Promise<void> {
  const { running, setState } = ui
  const run = running.current
  if (run === null) return
  setState({ phase: 'running', records: run.got.records, resuming: false })
  const ended = await download(run.got, run.query, run.format, run.abort.signal, resuming => {
    setState({ phase: 'running', records: run.got.records, resuming })
    if (resuming) announce(t('resuming', { records: count(run.got.records) }))
  })
  if (running.current !== run) return // the screen was left
  if (ended === 'done') {
    const name = fileName(run.format, false, ui.dayOf(new Date()))
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
  if (ended.status === 401) ui.signedOut()
  ui.fail(ended)
  // What arrived stays: saved as it is, or continued after its last record.
  setState(run.got.records > 0 ? { phase: 'stopped', records: run.got.records } : { phase: 'idle' })
}

/** Download: the form's range (`from`, `to`: dates; or `everything`) checked, then the export read. */
export async function start (ui: Ui, { filters, everything, from, to, format }: {
  filters: ExportQuery, everything: boolean, from: string, to: string, format: ExportFormat
}): Promise<void> {
  const since = everything ? undefined : startOf(from)
  const until = everything ? undefined : startOf(to, 1) // the whole of the last day
  if (since === null || until === null) {
    ui.fail(await refusal([...(since === null ? ['since' as const] : []), ...(until === null ? ['until' as const] : [])]))
    return
  }
  if (since !== undefined && until !== undefined && Date.parse(until) <= Date.parse(since)) {
    ui.fail(await refusal(['until']))
    return
  }
  ui.fail(null)
  const query = { ...filters, ...(since === undefined ? {} : { since }), ...(until === undefined ? {} : { until }) }
  ui.running.current = { abort: new AbortController(), got: nothingReceived(), query, format }
  await go(ui)
}

/** Continue: an export that stopped, after its last complete record. */
export async function resume (ui: Ui): Promise<void> {
  if (ui.running.current === null) return
  ui.fail(null)
  ui.running.current.abort = new AbortController()
  await go(ui)
}

/** Save what arrived of an export that stopped, as a partial file. */
export async function savePart (ui: Ui): Promise<void> {
  const run = ui.running.current
  if (run === null) return
  const name = fileName(run.format, true, ui.dayOf(new Date()))
  save(run.got, run.format, name)
  announce(t('saved', { name, records: count(run.got.records) }))
}

/**
 * What the form shows once an export began: Cancel while it runs, the count, what was saved; its
 * `note` (a refusal, what stopped it); what arrived before a stop, with Continue and Save.
 */
export function Progress ({ ui, state, note }: { ui: Ui, state: State, note: JSX.Element | null }) {
  const { running, startButton } = ui
  // Leaving the screen ends the export (nothing is saved).
  useEffect(() => () => { const run = running.current; running.current = null; run?.abort.abort() }, [running])
  // The focus follows the control that acts next: Cancel while it runs, Download after.
  const cancelButton = useRef<HTMLButtonElement>(null)
  const busy = state.phase === 'running'
  const wasBusy = useRef(false)
  useLayoutEffect(() => {
    if (busy && !wasBusy.current) cancelButton.current?.focus()
    if (!busy && wasBusy.current && document.activeElement === document.body) startButton.current?.focus()
    wasBusy.current = busy
  }, [busy, startButton])
  return (
    <>
      {state.phase === 'running' && (
        <>
          <button type='button' ref={cancelButton} onClick={() => { running.current?.abort.abort() }}>{t('cancel')}</button>
          <p id='export-progress'>
            <progress aria-label={t('inProgress')} />{' '}
            {t(state.resuming ? 'resumingNow' : 'running', { records: count(state.records) })}
          </p>
        </>
      )}
      {state.phase === 'saved' && <p id='export-progress'>{tParts('saved', { name: <bdi>{state.name}</bdi>, records: count(state.records) })}</p>}
      {note}
      {state.phase === 'stopped' && (
        <p>
          {t('stopped', { records: count(state.records) })}{' '}
          <button type='button' onClick={() => { void resume(ui) }}>{t('continue')}</button>
          <button type='button' onClick={() => { void savePart(ui) }}>{t('savePart', { records: count(state.records) })}</button>
        </p>
      )}
    </>
  )
}
