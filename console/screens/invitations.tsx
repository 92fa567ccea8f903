import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { inviterText, when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { InviteForm } from '../components/invite-form.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { usePaged } from '../hooks/use-paged.js'

type Status = Schemas['InvitationStatus']
const STATUSES: Status[] = ['pending', 'accepted', 'expired', 'revoked']

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
function Funnel () {
  const [days, setDays] = useState(30)
  const { data: f, problem, reload } = useCall(async () => {
    const until = new Date()
    const query = { since: new Date(until.getTime() - days * 86_400_000).toISOString(), until: until.toISOString() }
    return await call(api.GET('/api/invitations/funnel', { params: { query } }))
  }, [days], { live: true })
  return (
    <section class='card' aria-labelledby='funnel-title'>
      <h2 id='funnel-title'>Funnel</h2>
      <label for='funnel-days'>Invitations sent in the last</label>
      <select id='funnel-days' value={String(days)} onChange={e => { setDays(Number(e.currentTarget.value)) }}>
        {PERIODS.map(d => <option key={d} value={String(d)}>{d} days</option>)}
      </select>
      <ProblemNote problem={problem} retry={reload} />
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

export function Invitations () {
  const [status, setStatus] = useState<Status>('pending')
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invitations', { params: { query: cursor === undefined ? { status, limit: 25 } : { status, limit: 25, cursor } } })),
    [status]
  )
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
      <Funnel />
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
              <td class='address'>{inv.email}</td>
              <td>{inv.role}</td>
              <td><States inv={inv} /></td>
              <td>{when(status === 'accepted' ? inv.acceptedAt : inv.expiresAt)}</td>
              <td>{when(inv.createdAt)}</td>
              <td class='inviter'>{inviterText(inv.inviter)}</td>
              {status === 'pending' && (
                <td class='actions'>
                  <button type='button' aria-label={`Resend to ${inv.email}`} onClick={() => { void resend(inv) }}>Resend</button>
                  <ConfirmButton label='Revoke' name={`Revoke ${inv.email}`} confirm={`Yes, revoke ${inv.email}`} onConfirm={async () => { await revoke(inv) }} />
                </td>
              )}
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
