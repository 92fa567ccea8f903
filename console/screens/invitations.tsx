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
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-invitations.json'

const { t } = screenWordsOf<typeof own>('invitations')

type Status = Schemas['InvitationStatus']
const STATUSES: Status[] = ['pending', 'accepted', 'expired', 'revoked']

/** The Delivery cell's words: how the e-mail went, and why it bounced when it did. */
function deliveryText (inv: Schemas['Invitation']): string {
  if (inv.deliveryStatus === 'bounced') return inv.bounceReason == null ? t('invBounced') : t('invBouncedBecause', { reason: inv.bounceReason })
  return t('invDelivery', { status: inv.deliveryStatus })
}

/** A step of an invitation (invStep's `step`). */
type Step = 'viewed' | 'reminded' | 'accepted' | 'revoked' | 'expired'

/** What happened to an invitation, in order: its delivery (when last sent), then each first: viewed, reminded, accepted… */
function States ({ inv }: { inv: Schemas['Invitation'] }) {
  const steps: Array<[Step, string | null | undefined]> = [
    ['viewed', inv.viewedAt], ['reminded', inv.remindedAt], ['accepted', inv.acceptedAt], ['revoked', inv.revokedAt],
    ['expired', inv.status === 'expired' ? inv.expiresAt : null]
  ]
  return (
    <ul class='states'>
      <li>{deliveryText(inv)}{inv.lastSentAt != null && <span class='muted'> · {t('invLastSent', { when: when(inv.lastSentAt) })}</span>}{inv.deliveryStatus === 'failed' && inv.deliveryError != null && <span class='muted'> · {inv.deliveryError}</span>}</li>
      {steps.filter(([, at]) => at != null).map(([step, at]) => <li key={step}>{t('invStep', { step })} <span class='muted'>{when(at)}</span></li>)}
    </ul>
  )
}

const PERIODS = [7, 30, 90]
/** A count as the reader's language writes it. */
const num = (n: number): string => n.toLocaleString(readerLanguage())
/** A count of the sent, with its share of them: "3 (50 %)". */
const share = (n: number, of: number): string => of === 0 ? num(n) : t('invShare', { count: num(n), percent: num(Math.round(100 * n / of)) })

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
      <h2 id='funnel-title'>{t('invFunnel')}</h2>
      <label for='funnel-days'>{t('invFunnelPeriod')}</label>
      <select id='funnel-days' value={String(days)} onChange={e => { setDays(Number(e.currentTarget.value)) }}>
        {PERIODS.map(d => <option key={d} value={String(d)}>{t('invDays', { days: d })}</option>)}
      </select>
      <ProblemNote problem={problem} retry={reload} />
      {f !== null && (
        <dl id='funnel'>
          <dt>{t('invFunnelSent')}</dt><dd>{num(f.sent)}</dd>
          <dt>{t('invFunnelViewed')}</dt><dd>{share(f.viewed, f.sent)}</dd>
          <dt>{t('invFunnelAccepted')}</dt><dd>{share(f.accepted, f.sent)}</dd>
          <dt>{t('invFunnelUnseen')}</dt><dd>{share(f.expiredUnseen, f.sent)}</dd>
          <dt>{t('invFunnelBounced')}</dt><dd>{share(f.bounced, f.sent)}</dd>
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
    if (r.ok) announce(t('invResentDone', { email: inv.email }))
    else { setRowProblem(r.problem); announce(r.problem.text) }
    reload()
  }
  const revoke = async (inv: Schemas['Invitation']) => {
    setRowProblem(null)
    const r = await call(api.DELETE('/api/invitations/{invitationId}', { params: { path: { invitationId: inv.id } } }))
    if (r.ok) announce(t('invRevokedDone', { email: inv.email }))
    else { setRowProblem(r.problem); announce(r.problem.text) }
    reload()
  }

  return (
    <>
      <InviteForm onDone={reload} />
      <Funnel />
      <h2>{t('screenInvitations')}</h2>
      <div class='tabs' role='group' aria-label={t('invShowWhich')}>
        {STATUSES.map(s => (
          <button key={s} type='button' aria-pressed={s === status} onClick={() => { setStatus(s) }}>{t('invStatus', { status: s })}</button>
        ))}
      </div>
      <ProblemNote problem={rowProblem} />
      <ListState items={items} problem={problem} retry={reload} empty={t('invNone', { status })}>
        <Table
          caption={t('invCaption', { status })} pager={pager}
          heads={[
            t('headEmail'), t('headRole'), t('invHeadHappened'), t(status === 'accepted' ? 'invHeadAccepted' : 'invHeadExpires'), t('invHeadInvited'),
            t('invHeadInvitedBy'), ...(status === 'pending' ? [''] : [])
          ]}
        >
          {items?.map(inv => (
            <tr key={inv.id}>
              <td class='address'>{inv.email}</td>
              <td>{t('invRole', { role: inv.role })}</td>
              <td><States inv={inv} /></td>
              <td>{when(status === 'accepted' ? inv.acceptedAt : inv.expiresAt)}</td>
              <td>{when(inv.createdAt)}</td>
              <td class='inviter'>{inviterText(inv.inviter)}</td>
              {status === 'pending' && (
                <td class='actions'>
                  <button type='button' aria-label={t('invResendTo', { email: inv.email })} onClick={() => { void resend(inv) }}>{t('invResend')}</button>
                  <ConfirmButton
                    label={t('invRevoke')} name={t('invRevokeName', { email: inv.email })} confirm={t('invRevokeConfirm', { email: inv.email })}
                    onConfirm={async () => { await revoke(inv) }}
                  />
                </td>
              )}
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
