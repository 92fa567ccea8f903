import { useEffect, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { when } from '../format.js'
import { AddressForm, invite, refusal, type Result } from '../components/address-form.js'
import { ProblemNote } from '../components/problem-note.js'
import { NoticeChoice } from '../components/notice-choice.js'
import { ListState, Table } from '../components/table.js'
import { usePaged } from '../hooks/use-paged.js'
import { screenWordsOf, type ScreenWordKey } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-profile.json'

const { t } = screenWordsOf<typeof own>('profile')
type WordKey = ScreenWordKey<typeof own>

// What a member may do under each invite policy (GET /api/workspace tells any member the policy).
const MEMBER_MAY: Record<Schemas['InvitePolicy'], WordKey> = {
  admins: 'memberMayAdmins',
  request: 'memberMayRequest',
  members: 'memberMayMembers'
}

/** One invite request (POST /api/invite-requests), as a result line. */
async function ask (email: string, role: Schemas['Role']): Promise<Result> {
  const r = await call(api.POST('/api/invite-requests', { body: { email, role } }))
  if (!r.ok) return refusal(email, r.problem)
  return r.response.status === 201
    ? { email, outcome: 'asked', text: t('resultAsked', { role }) }
    : { email, outcome: 'asked', text: t('resultAlreadyAsked') }
}

const STATUS_TEXT: Record<Schemas['InviteRequestStatus'], WordKey> = {
  pending: 'requestPending', approved: 'requestApproved', denied: 'requestDenied', expired: 'requestExpired'
}

/** The member's own requests (GET /api/invite-requests/mine), newest first, paged on the server. */
function MyRequests ({ tick }: { tick: number }) {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invite-requests/mine', { params: { query: cursor === undefined ? { limit: 10 } : { limit: 10, cursor } } })),
    [tick]
  )
  return (
    <section aria-labelledby='mine-title'>
      <h2 id='mine-title'>{t('myRequests')}</h2>
      <button type='button' onClick={reload}>{t('refreshMyRequests')}</button>
      <ListState items={items} problem={problem} retry={reload} empty={t('noRequests')}>
        <Table
          caption={t('requestsCaption')} pager={pager}
          heads={[t('headEmail'), t('headRole'), t('headStatus'), t('headAsked'), t('headDecided')]}
        >
          {items?.map(req => (
            <tr key={req.id}>
              <td>{req.email}</td>
              <td>{req.role}</td>
              <td class='status'>{t(STATUS_TEXT[req.status])}{req.reason !== null && <span class='muted'> · {req.reason}</span>}</td>
              <td>{when(req.createdAt)}</td>
              <td>{req.status === 'pending' ? t('expiresOn', { date: when(req.expiresAt) }) : when(req.decidedAt)}</td>
            </tr>
          ))}
        </Table>
      </ListState>
    </section>
  )
}

// Everyone's first screen: who is signed in, in which workspace, and the way out. A member also
// invites or asks for invitations here, as the invite policy allows, and sees their requests; an
// admin chooses how they hear of new invite requests.
export function Profile ({ me }: ScreenProps) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [policy, setPolicy] = useState<Schemas['InvitePolicy'] | null>(null)
  const [tick, setTick] = useState(0)
  const member = me.user.role === 'member'
  useEffect(() => {
    if (!member) return
    void call(api.GET('/api/workspace')).then(r => { if (r.ok) setPolicy(r.data.invitePolicy); else setProblem(r.problem) })
  }, [member])
  const signOut = async () => {
    const r = await call(api.POST('/api/auth/logout'))
    if (r.ok) location.assign('/')
    else setProblem(r.problem)
  }
  const done = () => { setTick(n => n + 1) }
  return (
    <>
      <section aria-labelledby='me-title'>
        <p id='status' class='muted'>{t('signedInAs', { email: me.user.email })}</p>
        <h2 id='me-title'>{t('yourProfile')}</h2>
        <dl>
          <dt>{t('headEmail')}</dt><dd id='me-email'>{me.user.email}</dd>
          <dt>{t('headName')}</dt><dd id='me-name'>{me.user.name ?? '—'}</dd>
          <dt>{t('headRole')}</dt><dd id='me-role'>{t('role', { role: me.user.role })}</dd>
          <dt>{t('workspace')}</dt><dd id='me-workspace'>{me.workspace.name}</dd>
        </dl>
        {member && (
          <p id='member-may' class='muted'>
            {t('adminsManage')} {policy === null ? '' : t(MEMBER_MAY[policy])}
          </p>
        )}
        <ProblemNote problem={problem} />
        <button id='logout' type='button' onClick={signOut}>{t('signOut')}</button>
      </section>
      {!member && <NoticeChoice />}
      {member && policy === 'members' && (
        <AddressForm id='invite' kind='invite' roles={['member']} send={invite} onDone={done} />
      )}
      {member && policy === 'request' && (
        <AddressForm id='ask' kind='ask' roles={['member', 'admin']} send={ask} onDone={done} />
      )}
      {member && <MyRequests tick={tick} />}
    </>
  )
}
