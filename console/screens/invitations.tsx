import { useEffect, useState } from 'preact/hooks'
import { api, call, whenToRetry, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../main.js'
import { ConfirmButton, ListState, ProblemNote, Table, announce, inviterText, usePaged, when } from '../ui.js'

type Status = Schemas['InvitationStatus']
const STATUSES: Status[] = ['pending', 'accepted', 'expired', 'revoked']

export interface Result {
  email: string
  outcome: 'invited' | 're-sent' | 'asked' | 'member' | 'invalid' | 'budget' | 'failed'
  text: string
}

/** Addresses as pasted: separated by commas, semicolons, spaces or new lines; each once. */
export function splitAddresses (text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).map(a => a.trim()).filter(a => a !== ''))]
}

/** A refused address, in words: the same for an invitation and a request. */
export function refusal (email: string, p: Problem): Result {
  if (p.code === 'USER_EXISTS') return { email, outcome: 'member', text: 'already a member' }
  if (p.code === 'VALIDATION_FAILED') return { email, outcome: 'invalid', text: 'not a valid e-mail address' }
  if (p.status === 429) {
    return { email, outcome: 'budget', text: `over the e-mail budget: try again ${whenToRetry(p.retryAfter ?? 60)}` }
  }
  return { email, outcome: 'failed', text: p.text }
}

/** One invitation (POST /api/users/invite), as a result line. */
export async function invite (email: string, role: Schemas['Role']): Promise<Result> {
  const r = await call(api.POST('/api/users/invite', { body: { email, role } }))
  if (!r.ok) return refusal(email, r.problem)
  return r.data.outcome === 'resent'
    ? { email, outcome: 're-sent', text: 'a pending invitation was re-sent with a fresh link' }
    : { email, outcome: 'invited', text: 'invited' }
}

const DONE: ReadonlySet<Result['outcome']> = new Set(['invited', 're-sent', 'asked'])

/**
 * The form for one or many pasted addresses and a role: one operation per address (`send`; the
 * contract has no batch), in order (a budget refusal is reported for the addresses it stopped), a
 * result per address inline. The admins' invite form, and a member's invite or request form.
 */
export function AddressForm ({ id, title, roles, action, send, onDone }: {
  id: string
  title: string
  roles: Array<Schemas['Role']>
  /** The button, the button while sending, what the summary says of each done address. */
  action: [string, string, string]
  send: (email: string, role: Schemas['Role']) => Promise<Result>
  onDone: () => void
}) {
  const [text, setText] = useState('')
  const [role, setRole] = useState<Schemas['Role']>('member')
  const [busy, setBusy] = useState(false)
  const [results, setResults] = useState<Result[]>([])
  const submit = async (e: Event) => {
    e.preventDefault()
    const addresses = splitAddresses(text)
    if (addresses.length === 0) { announce('Enter at least one e-mail address.'); return }
    setBusy(true)
    const done: Result[] = []
    for (const email of addresses) {
      done.push(await send(email, role))
      setResults([...done])
    }
    setBusy(false)
    const ok = done.filter(r => DONE.has(r.outcome)).length
    announce(`${ok} of ${done.length} ${action[2]}. ` + done.map(r => `${r.email}: ${r.text}.`).join(' '))
    if (done.every(r => DONE.has(r.outcome) || r.outcome === 'member')) setText('')
    onDone()
  }
  return (
    <form class='card' onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{title}</h2>
      <label for={`${id}-emails`}>E-mail addresses</label>
      <textarea
        id={`${id}-emails`} rows={3} aria-describedby={`${id}-hint`} value={text}
        onInput={e => { setText(e.currentTarget.value) }}
      />
      <p id={`${id}-hint`} class='muted'>One or many, separated by commas, spaces or new lines.{roles.length === 1 ? ` They join as ${roles[0] ?? 'member'}s.` : ''}</p>
      {roles.length > 1 && (
        <>
          <label for={`${id}-role`}>Role</label>
          <select id={`${id}-role`} value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
            {roles.map(r => <option key={r} value={r}>{r}</option>)}
          </select>
        </>
      )}
      <button type='submit' disabled={busy}>{busy ? action[1] : action[0]}</button>
      {results.length > 0 && (
        <ul class='results' aria-label='Results'>
          {results.map(r => <li key={r.email} class={`result ${r.outcome}`} data-outcome={r.outcome}><strong>{r.email}</strong>: {r.text}</li>)}
        </ul>
      )}
    </form>
  )
}

type Row = Schemas['InviteBatchRequest']['rows'][number]
type Batch = Schemas['InvitationBatch']
type Outcome = 'invited' | 're-sent' | 'member' | 'invalid' | 'duplicate' | 'budget' | 'failed'
interface RowResult { key: string, email: string, outcome: Outcome, text: string }

const ROLE = /^(admin|member)$/i
/** A batch request takes 1,000 rows at most; more are sent as several batches, in order. */
const PER_REQUEST = 1000

/**
 * Rows as pasted or as a CSV file of `email,role`: a line "address,role" gives that row its role;
 * any other line is addresses separated by commas, semicolons or spaces (in the form's role). A
 * header line (email,role) is skipped.
 */
export function parseRows (text: string): Row[] {
  const rows: Row[] = []
  for (const line of text.split(/\r?\n/)) {
    const cells = line.split(/[,;\t]/).map(c => c.trim().replace(/^"(.*)"$/, '$1'))
    if (/^e-?mail$/i.test(cells[0] ?? '') && (cells.length === 1 || ROLE.test(cells[1] ?? '') || /^role$/i.test(cells[1] ?? ''))) continue
    if (cells.length === 2 && cells[0] !== '' && ROLE.test(cells[1] ?? '')) {
      rows.push({ email: cells[0] as string, role: (cells[1] as string).toLowerCase() as Schemas['Role'] })
      continue
    }
    for (const email of line.split(/[\s,;]+/).filter(a => a !== '')) rows.push({ email })
  }
  return rows
}

const OUTCOME: Record<Schemas['InvitationBatchRow']['result'], Outcome> = {
  invited: 'invited', resent: 're-sent', already_member: 'member', invalid: 'invalid', duplicate: 'duplicate', over_budget: 'budget'
}

function rowResultOf (batchId: string, r: Schemas['InvitationBatchRow']): RowResult {
  const key = `${batchId}:${r.index}`
  const outcome = OUTCOME[r.result]
  const delivery = r.delivery === 'failed' ? ` (the e-mail failed: ${r.message ?? 'no reason given'})` : r.delivery === 'cancelled' ? ' (its e-mail was not needed any more)' : ''
  switch (r.result) {
    case 'invited': return { key, email: r.email, outcome, text: `invited as ${r.role}${delivery}` }
    case 'resent': return { key, email: r.email, outcome, text: `a pending invitation is re-sent with a fresh link${delivery}` }
    case 'already_member': return { key, email: r.email, outcome, text: 'already a member' }
    case 'invalid': return { key, email: r.email, outcome, text: 'not a valid e-mail address' }
    case 'duplicate': return { key, email: r.email, outcome, text: `listed twice: the same address as row ${(r.duplicateOf ?? 0) + 1}` }
    case 'over_budget': return { key, email: r.email, outcome, text: `over the e-mail budget: try again ${whenToRetry(r.retryAfter ?? 60)}` }
  }
}

/** A large batch's progress: polled until no e-mail is left to send. */
function Progress ({ batch }: { batch: Batch }) {
  const owed = batch.results.invited + batch.results.resent
  const done = batch.delivery.sent + batch.delivery.failed + batch.delivery.cancelled
  return (
    <p class='batch-progress'>
      <label for={`progress-${batch.id}`}>E-mails sent: {done} of {owed}{batch.status === 'completed' ? ' — done' : ''}</label>{' '}
      <progress id={`progress-${batch.id}`} max={Math.max(1, owed)} value={done} />
    </p>
  )
}

/**
 * The admins' invite form: pasted rows or a CSV file of email,role, sent as batches
 * (POST /api/invitations/batch, 1,000 rows each), a result per row inline, a large batch's progress.
 */
function InviteForm ({ onDone }: { onDone: () => void }) {
  const [text, setText] = useState('')
  const [role, setRole] = useState<Schemas['Role']>('member')
  const [busy, setBusy] = useState(false)
  const [results, setResults] = useState<RowResult[]>([])
  const [batches, setBatches] = useState<Batch[]>([])
  const [more, setMore] = useState<Array<{ id: string, cursor: string }>>([])
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
        if (next.every(b => b.status === 'completed')) { announce('Every invitation e-mail has been sent.'); onDone() }
      })
    }, 1000)
    return () => { clearTimeout(timer) }
  }, [batches])
  const readFile = async (e: Event) => {
    const file = (e.currentTarget as HTMLInputElement).files?.[0]
    if (file === undefined) return
    const csv = await file.text()
    setText(text.trim() === '' ? csv : `${text.trimEnd()}\n${csv}`)
    announce(`${parseRows(csv).length} rows read from ${file.name}.`)
  }
  const submit = async (e: Event) => {
    e.preventDefault()
    const rows = parseRows(text)
    if (rows.length === 0) { announce('Enter at least one e-mail address.'); return }
    setBusy(true)
    const done: RowResult[] = []
    const large: Batch[] = []
    const pages: Array<{ id: string, cursor: string }> = []
    for (let from = 0; from < rows.length; from += PER_REQUEST) {
      const r = await call(api.POST('/api/invitations/batch', { body: { role, rows: rows.slice(from, from + PER_REQUEST) } }))
      if (!r.ok) {
        done.push({ key: `failed:${from}`, email: `rows ${from + 1}–${Math.min(rows.length, from + PER_REQUEST)}`, outcome: 'failed', text: r.problem.text })
        continue
      }
      done.push(...r.data.items.map(i => rowResultOf(r.data.id, i)))
      if (r.data.status !== 'completed' && r.response.status === 202) large.push(r.data)
      if (r.data.nextCursor !== null) pages.push({ id: r.data.id, cursor: r.data.nextCursor })
      setResults([...done])
    }
    setBatches(large)
    setMore(pages)
    setBusy(false)
    const ok = done.filter(r => r.outcome === 'invited' || r.outcome === 're-sent').length
    announce(`${ok} of ${rows.length} invited. ` + done.slice(0, 25).map(r => `${r.email}: ${r.text}.`).join(' '))
    if (done.every(r => r.outcome === 'invited' || r.outcome === 're-sent' || r.outcome === 'member')) setText('')
    onDone()
  }
  const showMore = async () => {
    const next = more[0]
    if (next === undefined) return
    const r = await call(api.GET('/api/invitation-batches/{batchId}', { params: { path: { batchId: next.id }, query: { limit: 100, cursor: next.cursor } } }))
    if (!r.ok) { announce(r.problem.text); return }
    setResults([...results, ...r.data.items.map(i => rowResultOf(next.id, i))])
    setMore(r.data.nextCursor !== null ? [{ id: next.id, cursor: r.data.nextCursor }, ...more.slice(1)] : more.slice(1))
  }
  return (
    <form class='card' onSubmit={submit} aria-labelledby='invite-title'>
      <h2 id='invite-title'>Invite people</h2>
      <label for='invite-emails'>E-mail addresses</label>
      <textarea
        id='invite-emails' rows={3} aria-describedby='invite-hint' value={text}
        onInput={e => { setText(e.currentTarget.value) }}
      />
      <p id='invite-hint' class='muted'>One or many (up to thousands), separated by commas, spaces or new lines; a line <code>address,admin</code> gives that person their own role.</p>
      <label for='invite-csv'>Or a CSV file of <code>email,role</code></label>
      <input id='invite-csv' type='file' accept='.csv,text/csv,text/plain' onChange={e => { void readFile(e) }} />
      <label for='invite-role'>Role (for rows that name none)</label>
      <select id='invite-role' value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
        <option value='member'>member</option>
        <option value='admin'>admin</option>
      </select>
      <button type='submit' disabled={busy}>{busy ? 'Inviting…' : 'Send invitations'}</button>
      {batches.map(b => <Progress key={b.id} batch={b} />)}
      {results.length > 0 && (
        <ul class='results' aria-label='Results'>
          {results.map(r => <li key={r.key} class={`result ${r.outcome}`} data-outcome={r.outcome}><strong>{r.email}</strong>: {r.text}</li>)}
        </ul>
      )}
      {more.length > 0 && <button type='button' onClick={() => { void showMore() }}>Show more results</button>}
    </form>
  )
}

/** The Delivery cell's words: how the e-mail went, and why it bounced when it did. */
function deliveryText (inv: Schemas['Invitation']): string {
  if (inv.deliveryStatus === 'identity_provider') return 'sent by the identity provider'
  if (inv.deliveryStatus === 'bounced') return `bounced: ${inv.bounceReason ?? "the recipient's mail server refused it"}`
  if (inv.deliveryStatus === 'sent') return 'delivered to the relay'
  if (inv.deliveryStatus === 'not_sent') return 'never e-mailed'
  return inv.deliveryStatus
}

/** What happened to an invitation, in order: its delivery (when last sent), then each first: viewed, reminded, accepted… */
function States ({ inv }: { inv: Schemas['Invitation'] }) {
  const steps: Array<[string, string | null | undefined]> = [
    ['viewed', inv.viewedAt], ['reminded', inv.remindedAt], ['accepted', inv.acceptedAt], ['revoked', inv.revokedAt],
    ['expired', inv.status === 'expired' ? inv.expiresAt : null]
  ]
  return (
    <ul class='states'>
      <li>{deliveryText(inv)}{inv.lastSentAt != null && <span class='muted'> · last sent {when(inv.lastSentAt)}</span>}{inv.deliveryStatus === 'failed' && inv.deliveryError != null && <span class='muted'> · {inv.deliveryError}</span>}</li>
      {steps.filter(([, at]) => at != null).map(([label, at]) => <li key={label}>{label} <span class='muted'>{when(at)}</span></li>)}
    </ul>
  )
}

const PERIODS = [7, 30, 90]
const share = (n: number, of: number) => of === 0 ? '' : ` (${Math.round(100 * n / of)} %)`

/** The workspace's funnel over the last days: sent, viewed, accepted, expired unseen, bounced. */
function Funnel ({ news }: { news: number }) {
  const [days, setDays] = useState(30)
  const [f, setF] = useState<Schemas['InvitationFunnel'] | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const load = () => {
    const until = new Date()
    const query = { since: new Date(until.getTime() - days * 86_400_000).toISOString(), until: until.toISOString() }
    void call(api.GET('/api/invitations/funnel', { params: { query } })).then(r => { if (r.ok) { setF(r.data); setProblem(null) } else setProblem(r.problem) })
  }
  useEffect(load, [days, news])
  return (
    <section class='card' aria-labelledby='funnel-title'>
      <h2 id='funnel-title'>Funnel</h2>
      <label for='funnel-days'>Invitations sent in the last</label>
      <select id='funnel-days' value={String(days)} onChange={e => { setDays(Number(e.currentTarget.value)) }}>
        {PERIODS.map(d => <option key={d} value={String(d)}>{d} days</option>)}
      </select>
      <ProblemNote problem={problem} retry={load} />
      {f !== null && (
        <dl id='funnel'>
          <dt>Sent</dt><dd>{f.sent}</dd>
          <dt>Viewed</dt><dd>{f.viewed}{share(f.viewed, f.sent)}</dd>
          <dt>Accepted</dt><dd>{f.accepted}{share(f.accepted, f.sent)}</dd>
          <dt>Expired unseen</dt><dd>{f.expiredUnseen}{share(f.expiredUnseen, f.sent)}</dd>
          <dt>Bounced</dt><dd>{f.bounced}{share(f.bounced, f.sent)}</dd>
        </dl>
      )}
    </section>
  )
}

export function Invitations ({ news }: ScreenProps) {
  const [status, setStatus] = useState<Status>('pending')
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invitations', { params: { query: cursor === undefined ? { status, limit: 25 } : { status, limit: 25, cursor } } })),
    [status]
  )
  useEffect(() => { if (news > 0) reload() }, [news])
  const [rowProblem, setRowProblem] = useState<Problem | null>(null)

  const resend = async (inv: Schemas['Invitation']) => {
    setRowProblem(null)
    const r = await call(api.POST('/api/invitations/{invitationId}/resend', { params: { path: { invitationId: inv.id } } }))
    if (r.ok) announce(`The invitation to ${inv.email} was re-sent with a fresh link; the old link no longer works.`)
    else { setRowProblem(r.problem); announce(r.problem.text) }
    reload()
  }
  const revoke = async (inv: Schemas['Invitation']) => {
    setRowProblem(null)
    const r = await call(api.DELETE('/api/invitations/{invitationId}', { params: { path: { invitationId: inv.id } } }))
    if (r.ok) announce(`The invitation to ${inv.email} was revoked.`)
    else { setRowProblem(r.problem); announce(r.problem.text) }
    reload()
  }

  return (
    <>
      <InviteForm onDone={reload} />
      <Funnel news={news} />
      <h2>Invitations</h2>
      <div class='tabs' role='group' aria-label='Show invitations that are'>
        {STATUSES.map(s => (
          <button key={s} type='button' aria-pressed={s === status} onClick={() => { setStatus(s) }}>{s}</button>
        ))}
      </div>
      <ProblemNote problem={rowProblem} />
      <ListState items={items} problem={problem} retry={reload} empty={`No ${status} invitations.`}>
        <Table caption={`${status[0]?.toUpperCase() ?? ''}${status.slice(1)} invitations`} heads={['E-mail', 'Role', 'What happened', status === 'accepted' ? 'Accepted' : 'Expires', 'Invited', 'Invited by', ...(status === 'pending' ? [''] : [])]} pager={pager}>
          {items?.map(inv => (
            <tr key={inv.id}>
              <td>{inv.email}</td>
              <td>{inv.role}</td>
              <td><States inv={inv} /></td>
              <td>{when(status === 'accepted' ? inv.acceptedAt : inv.expiresAt)}</td>
              <td>{when(inv.createdAt)}</td>
              <td class='inviter'>{inviterText(inv.inviter)}</td>
              {status === 'pending' && (
                <td class='actions'>
                  <button type='button' onClick={() => { void resend(inv) }}>Resend to {inv.email}</button>
                  <ConfirmButton label={`Revoke ${inv.email}`} confirm={`Yes, revoke ${inv.email}`} onConfirm={async () => { await revoke(inv) }} />
                </td>
              )}
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
