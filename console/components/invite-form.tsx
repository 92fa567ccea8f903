import { useEffect, useState } from 'preact/hooks'
import { api, call, retryValues, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { parseRows, rowsText, type Row } from '../rows.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { useSendForm } from '../hooks/use-send-form.js'
import { Results, type RowResult } from './results.js'
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-invitations.json'

const { t, tParts } = screenWordsOf<typeof own>('invitations')

type Batch = Schemas['InvitationBatch']
type BatchRow = Schemas['InvitationBatchRow']

/** A batch request takes 1,000 rows at most; more are sent as several batches, in order. */
const PER_REQUEST = 1000

const OUTCOME: Record<BatchRow['result'], string> = {
  invited: 'invited', resent: 're-sent', already_member: 'member', invalid: 'invalid', duplicate: 'duplicate', over_budget: 'budget'
}
/** Rows that stay in the box: an address to correct, or one the budget stopped. */
const STAYS: ReadonlySet<BatchRow['result']> = new Set(['invalid', 'over_budget'])

/** A count as the reader's language writes it. */
const num = (n: number): string => n.toLocaleString(readerLanguage())

/** A row of the box (`sent`, the rows as sent; `from`, the first row's place in them) as a result line. */
function rowResultOf (batchId: string, from: number, sent: Row[], r: BatchRow): RowResult {
  const row = from + r.index + 1
  const base = { key: `${batchId}:${r.index}`, row, email: r.email, outcome: OUTCOME[r.result], failed: STAYS.has(r.result) }
  // How its e-mail went, when it did not: failed (why), or cancelled (not needed any more).
  const delivery = { delivery: r.delivery ?? '', reason: r.message ?? t('invNoReason') }
  switch (r.result) {
    case 'invited': return { ...base, text: t('invRowInvited', { ...delivery, role: t('invRole', { role: r.role }) }) }
    case 'resent': return { ...base, text: t('invRowResent', delivery) }
    case 'already_member': return { ...base, text: t('invRowMember') }
    case 'invalid': return { ...base, text: t('invRowInvalid') }
    case 'duplicate':
      // The answer names the earlier row (its index); rows are counted from 1, as the form shows them.
      return { ...base, text: r.duplicateOf !== null ? t('invRowDuplicateOf', { row: num(r.duplicateOf + 1) }) : t('invRowDuplicate') }
    case 'over_budget': return { ...base, text: t('invRowOverBudget', retryValues(r.retryAfter ?? 60)) }
  }
}

/** A large batch's progress: polled until no e-mail is left to send. */
function Progress ({ batch }: { batch: Batch }) {
  const owed = batch.results.invited + batch.results.resent
  const done = batch.delivery.sent + batch.delivery.failed + batch.delivery.cancelled
  return (
    <p class='batch-progress'>
      <label for={`progress-${batch.id}`}>{t('invProgress', { done: num(done), owed: num(owed), status: batch.status })}</label>{' '}
      <progress id={`progress-${batch.id}`} max={Math.max(1, owed)} value={done} />
    </p>
  )
}

/**
 * The admins' invite form: pasted rows or a CSV file of email,role, sent as batches
 * (POST /api/invitations/batch, 1,000 rows each). The results beside the form, a line per row
 * counted from 1; only the rows to correct or send again stay in the box, so sending again never
 * re-sends (and re-links) the rows already invited.
 */
export function InviteForm ({ onDone }: { onDone: () => void }) {
  const { text, setText, role, setRole, busy, setBusy, results, setResults, summary, sent, finish } = useSendForm()
  const [batches, setBatches] = useState<Batch[]>([])
  const [more, setMore] = useState<Array<{ id: string, from: number, rows: Row[], cursor: string }>>([])
  const problem = useFormProblem(['rows', 'role'])
  // Large batches (202): their progress, polled until every e-mail has left.
  useEffect(() => {
    if (batches.every(b => b.status === 'completed')) return
    const timer = setTimeout(() => {
      void Promise.all(batches.map(async b => {
        if (b.status === 'completed') return b
        const r = await call(api.GET('/api/invitation-batches/{batchId}', { params: { path: { batchId: b.id }, query: { limit: 1 } } }))
        return r.ok ? r.data : b
      })).then(next => {
        setBatches(next)
        if (next.every(b => b.status === 'completed')) { announce(t('invAllSent')); onDone() }
      })
    }, 1000)
    return () => { clearTimeout(timer) }
  }, [batches, onDone])
  const readFile = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0]
    if (file === undefined) return
    const csv = await file.text()
    setText(text.trim() === '' ? csv : `${text.trimEnd()}\n${csv}`)
    announce(t('invRowsRead', { count: parseRows(csv).length, file: file.name }))
  }
  const submit = async (e: Event) => {
    e.preventDefault()
    const rows = parseRows(text)
    if (rows.length === 0) { announce(t('invEnterOne')); return }
    setBusy(true)
    problem.fail(null)
    const done: RowResult[] = []
    const stay: Row[] = []
    const large: Batch[] = []
    const pages: Array<{ id: string, from: number, rows: Row[], cursor: string }> = []
    for (let from = 0; from < rows.length; from += PER_REQUEST) {
      const part = rows.slice(from, from + PER_REQUEST)
      const r = await call(api.POST('/api/invitations/batch', { body: { role, rows: part } }))
      if (!r.ok) {
        problem.fail(r.problem)
        stay.push(...part)
        done.push({ key: `failed:${sent}:${from}`, row: from + 1, email: t('invRowsRange', { first: num(from + 1), last: num(from + part.length) }), outcome: 'failed', text: r.problem.text, failed: true })
        continue
      }
      const answered = r.data.items.map(i => rowResultOf(r.data.id, from, rows, i))
      done.push(...answered)
      for (const i of r.data.items) { const row = part[i.index]; if (STAYS.has(i.result) && row !== undefined) stay.push(row) }
      if (r.data.status !== 'completed' && r.response.status === 202) large.push(r.data)
      if (r.data.nextCursor !== null) pages.push({ id: r.data.id, from, rows, cursor: r.data.nextCursor })
      setResults([...done])
    }
    setResults(done)
    setBatches(large)
    setMore(pages)
    const ok = done.filter(r => r.outcome === 'invited' || r.outcome === 're-sent').length
    // Rows past the first page of a large batch are not known yet: they stay out of the box too.
    finish(t('invSummary', { ok, total: rows.length }), done.slice(0, 25).map(r => t('invResultLine', { email: r.email, text: r.text })).join(' '), rowsText(stay))
    onDone()
  }
  const showMore = async () => {
    const next = more[0]
    if (next === undefined) return
    const r = await call(api.GET('/api/invitation-batches/{batchId}', { params: { path: { batchId: next.id }, query: { limit: 100, cursor: next.cursor } } }))
    if (!r.ok) { announce(r.problem.text); return }
    setResults([...results, ...r.data.items.map(i => rowResultOf(next.id, next.from, next.rows, i))])
    setMore(r.data.nextCursor !== null ? [{ ...next, cursor: r.data.nextCursor }, ...more.slice(1)] : more.slice(1))
  }
  return (
    <div class='with-results'>
      <form class='card' onSubmit={submit} aria-labelledby='invite-title' ref={problem.form}>
        <h2 id='invite-title'>{t('invInvitePeople')}</h2>
        <label for='invite-emails'>{t('invEmailsLabel')}</label>
        <textarea
          id='invite-emails' rows={3} value={text} {...problem.control('rows', 'invite-emails', 'invite-hint')}
          onInput={e => { setText(e.currentTarget.value) }}
        />
        {problem.error('rows', 'invite-emails')}
        <p id='invite-hint' class='muted'>{tParts('invHint', { line: <code>address,admin</code> })}</p>
        <label for='invite-csv'>{tParts('invCsvLabel', { columns: <code>email,role</code> })}</label>
        <input id='invite-csv' type='file' accept='.csv,text/csv,text/plain' onChange={e => { void readFile(e) }} />
        <label for='invite-role'>{t('invRoleLabel')}</label>
        <select id='invite-role' value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
          <option value='member'>{t('invRole', { role: 'member' })}</option>
          <option value='admin'>{t('invRole', { role: 'admin' })}</option>
        </select>
        <button type='submit' disabled={busy}>{t(busy ? 'invInviting' : 'invSend')}</button>
        {problem.note}
        {batches.map(b => <Progress key={b.id} batch={b} />)}
      </form>
      <Results id='invite' sent={sent} summary={summary} results={results}>
        {more.length > 0 && <button type='button' onClick={() => { void showMore() }}>{t('invShowMore')}</button>}
      </Results>
    </div>
  )
}
