import { api, call, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { when } from '../format.js'
import { ProblemNote } from '../components/problem-note.js'
import { useCall } from '../hooks/use-call.js'

// An admin's landing: what waits for them, each with a link to the screen where it is done.
// Read again with every page of news of the events feed (a new request shows without a reload).

/** How many of the newest a list reads here (the contract's largest page). */
const PAGE = 100
const SHOWN = 5

const count = (n: number): string => n >= PAGE ? `${PAGE - 1}+` : String(n)

/** Invitations e-mailed that never arrived: bounced, or the send failed. */
const undelivered = (inv: Schemas['Invitation']): boolean => inv.deliveryStatus === 'bounced' || inv.deliveryStatus === 'failed'

export function Overview ({ me }: ScreenProps) {
  const requests = useCall(async () => await call(api.GET('/api/invite-requests', { params: { query: { status: 'pending', limit: PAGE } } })), [], { live: true })
  const invitations = useCall(async () => await call(api.GET('/api/invitations', { params: { query: { status: 'pending', limit: PAGE } } })), [], { live: true })
  const waiting = requests.data?.items ?? null
  const failed = invitations.data?.items.filter(undelivered) ?? null
  return (
    <>
      <p id='status' class='muted'>Signed in as {me.user.email} · <a href='/console/profile'>Your profile</a></p>
      <section class='card' aria-labelledby='wait-requests'>
        <h2 id='wait-requests'>Invite requests</h2>
        <ProblemNote problem={requests.problem} retry={requests.reload} />
        {waiting !== null && (waiting.length === 0
          ? <p class='muted' id='requests-waiting'>No request waits for a decision.</p>
          : (
            <>
              <p id='requests-waiting'><strong>{count(waiting.length)}</strong> {waiting.length === 1 ? 'request waits' : 'requests wait'} for a decision.</p>
              <ul class='waiting'>
                {waiting.slice(0, SHOWN).map(r => <li key={r.id} class='address'>{r.email} <span class='muted'>as {r.role}, {when(r.createdAt)}</span></li>)}
              </ul>
            </>
            ))}
        <p><a href='/console/requests'>Decide on invite requests</a></p>
      </section>
      <section class='card' aria-labelledby='wait-invitations'>
        <h2 id='wait-invitations'>Invitations that did not arrive</h2>
        <ProblemNote problem={invitations.problem} retry={invitations.reload} />
        {failed !== null && (failed.length === 0
          ? <p class='muted' id='invitations-failed'>Every pending invitation was delivered.</p>
          : (
            <>
              <p id='invitations-failed'><strong>{failed.length}</strong> pending {failed.length === 1 ? 'invitation' : 'invitations'} bounced or could not be sent: correct the address, or resend.</p>
              <ul class='waiting'>
                {failed.slice(0, SHOWN).map(i => (
                  <li key={i.id} class='address'>
                    {i.email} <span class='muted'>{i.deliveryStatus === 'bounced' ? `bounced${i.bounceReason == null ? '' : `: ${i.bounceReason}`}` : `not sent${i.deliveryError == null ? '' : `: ${i.deliveryError}`}`}</span>
                  </li>
                ))}
              </ul>
            </>
            ))}
        <p><a href='/console/invitations'>Open Invitations</a></p>
      </section>
    </>
  )
}
