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
  return /re-?sent/i.test(r.data.message)
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
      <AddressForm id='invite' title='Invite people' roles={['member', 'admin']} action={['Send invitations', 'Inviting…', 'invited']} send={invite} onDone={reload} />
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
