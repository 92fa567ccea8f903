import { api, call, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { when } from '../format.js'
import { ProblemNote } from '../components/problem-note.js'
import { useCall } from '../hooks/use-call.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-overview.json'

const { t, tParts } = screenWordsOf<typeof own>('overview')

// An admin's landing: what waits for them, each with a link to the screen where it is done.
// Read again with every page of news of the events feed (a new request shows without a reload).

/** How many of the newest a list reads here (the contract's largest page). */
const PAGE = 100
const SHOWN = 5

const count = (n: number): string => n >= PAGE ? `${PAGE - 1}+` : String(n)

/** Invitations e-mailed that never arrived: bounced, or the send failed. */
const undelivered = (inv: Schemas['Invitation']): boolean => inv.deliveryStatus === 'bounced' || inv.deliveryStatus === 'failed'

/** Why an invitation did not arrive, as the mail server or the send said. */
function notArrived (i: Schemas['Invitation']): string {
  if (i.deliveryStatus === 'bounced') return i.bounceReason == null ? t('bounced') : t('bouncedBecause', { reason: i.bounceReason })
  return i.deliveryError == null ? t('notSent') : t('notSentBecause', { reason: i.deliveryError })
}

export function Overview ({ me }: ScreenProps) {
  const requests = useCall(async () => await call(api.GET('/api/invite-requests', { params: { query: { status: 'pending', limit: PAGE } } })), [], { live: true })
  const invitations = useCall(async () => await call(api.GET('/api/invitations', { params: { query: { status: 'pending', limit: PAGE } } })), [], { live: true })
  const waiting = requests.data?.items ?? null
  const failed = invitations.data?.items.filter(undelivered) ?? null
  return (
    <>
      <p id='status' class='muted'>{tParts('signedInAs', { email: me.user.email, profile: <a href='/console/profile'>{t('yourProfile')}</a> })}</p>
      <section class='card' aria-labelledby='wait-requests'>
        <h2 id='wait-requests'>{t('inviteRequests')}</h2>
        <ProblemNote problem={requests.problem} retry={requests.reload} />
        {waiting !== null && (waiting.length === 0
          ? <p class='muted' id='requests-waiting'>{t('noRequestWaits')}</p>
          : (
            <>
              <p id='requests-waiting'>{tParts('requestsWait', { count: waiting.length, shown: <strong>{count(waiting.length)}</strong> })}</p>
              <ul class='waiting'>
                {waiting.slice(0, SHOWN).map(r => <li key={r.id} class='address'>{r.email} <span class='muted'>{t('requestAs', { role: r.role, when: when(r.createdAt) })}</span></li>)}
              </ul>
            </>
            ))}
        <p><a href='/console/requests'>{t('decideRequests')}</a></p>
      </section>
      <section class='card' aria-labelledby='wait-invitations'>
        <h2 id='wait-invitations'>{t('notArrived')}</h2>
        <ProblemNote problem={invitations.problem} retry={invitations.reload} />
        {failed !== null && (failed.length === 0
          ? <p class='muted' id='invitations-failed'>{t('allDelivered')}</p>
          : (
            <>
              <p id='invitations-failed'>{tParts('invitationsFailed', { count: failed.length, shown: <strong>{failed.length}</strong> })}</p>
              <ul class='waiting'>
                {failed.slice(0, SHOWN).map(i => (
                  <li key={i.id} class='address'>
                    {i.email} <span class='muted'>{notArrived(i)}</span>
                  </li>
                ))}
              </ul>
            </>
            ))}
        <p><a href='/console/invitations'>{t('openInvitations')}</a></p>
      </section>
    </>
  )
}
