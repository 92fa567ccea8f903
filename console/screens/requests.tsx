import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState } from '../components/table.js'
import { usePaged } from '../hooks/use-paged.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-requests.json'

const { t } = screenWordsOf<typeof own>('requests')

function Decide ({ req, onDone }: { req: Schemas['InviteRequest'], onDone: (p: Problem | null) => void }) {
  // member until the admin picks admin: what the requester asked for is not granted by a click
  const [role, setRole] = useState<Schemas['Role']>('member')
  const [reason, setReason] = useState('')
  const approve = async () => {
    const r = await call(api.POST('/api/invite-requests/{requestId}/approve', { params: { path: { requestId: req.id } }, body: { role } }))
    if (r.ok) announce(t('approved', { email: req.email, role }))
    onDone(r.ok ? null : r.problem)
  }
  const deny = async () => {
    const body = reason.trim() === '' ? {} : { reason: reason.trim() }
    const r = await call(api.POST('/api/invite-requests/{requestId}/deny', { params: { path: { requestId: req.id } }, body }))
    if (r.ok) announce(t('denied', { email: req.email }))
    onDone(r.ok ? null : r.problem)
  }
  return (
    <div class='decide'>
      <label for={`role-${req.id}`}>{t('roleFor', { email: req.email })}</label>
      <select id={`role-${req.id}`} value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
        <option value='member'>{t('role', { role: 'member' })}</option>
        <option value='admin'>{t('role', { role: 'admin' })}</option>
      </select>
      <button type='button' aria-label={t('approveWho', { email: req.email })} onClick={() => { void approve() }}>{t('approve')}</button>
      <label for={`reason-${req.id}`}>{t('reasonToDeny')}</label>
      <input id={`reason-${req.id}`} maxLength={500} value={reason} onInput={e => { setReason(e.currentTarget.value) }} />
      <button type='button' aria-label={t('denyWho', { email: req.email })} onClick={() => { void deny() }}>{t('deny')}</button>
    </div>
  )
}

/**
 * Who asked, as what, when: the address in bold where the language puts it. (tParts takes a
 * string as an element, so the role, a select's value, could not be one of its values.)
 */
function Asked ({ req }: { req: Schemas['InviteRequest'] }) {
  const [before, after] = t('askedToJoin', { email: '\u0000', role: req.role, asked: when(req.createdAt), expires: when(req.expiresAt) }).split('\u0000')
  return <p class='address'>{before}<strong>{req.email}</strong>{after}</p>
}

export function Requests () {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invite-requests', { params: { query: cursor === undefined ? { status: 'pending', limit: 25 } : { status: 'pending', limit: 25, cursor } } })),
    []
  )
  // A new request (and another admin's decision) is an event of the feed the console follows
  // (hooks/live.tsx): usePaged reads the list again when one arrives, without a reload.
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  return (
    <>
      <p class='muted'>{t('intro')}</p>
      <ProblemNote problem={actionProblem} />
      <ListState items={items} problem={problem} retry={reload} empty={t('noPending')}>
        <ul class='cards'>
          {items?.map(req => (
            <li key={req.id} class='card'>
              <Asked req={req} />
              <Decide req={req} onDone={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />
            </li>
          ))}
        </ul>
        {pager}
      </ListState>
    </>
  )
}
