import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState } from '../components/table.js'
import { usePaged } from '../hooks/use-paged.js'

function Decide ({ req, onDone }: { req: Schemas['InviteRequest'], onDone: (p: Problem | null) => void }) {
  // member until the admin picks admin: what the requester asked for is not granted by a click
  const [role, setRole] = useState<Schemas['Role']>('member')
  const [reason, setReason] = useState('')
  const approve = async () => {
    const r = await call(api.POST('/api/invite-requests/{requestId}/approve', { params: { path: { requestId: req.id } }, body: { role } }))
    if (r.ok) announce(`${req.email} was approved as ${role} and invited.`)
    onDone(r.ok ? null : r.problem)
  }
  const deny = async () => {
    const body = reason.trim() === '' ? {} : { reason: reason.trim() }
    const r = await call(api.POST('/api/invite-requests/{requestId}/deny', { params: { path: { requestId: req.id } }, body }))
    if (r.ok) announce(`The request for ${req.email} was denied.`)
    onDone(r.ok ? null : r.problem)
  }
  return (
    <div class='decide'>
      <label for={`role-${req.id}`}>Role for {req.email}</label>
      <select id={`role-${req.id}`} value={role} onChange={e => { setRole(e.currentTarget.value as Schemas['Role']) }}>
        <option value='member'>member</option>
        <option value='admin'>admin</option>
      </select>
      <button type='button' aria-label={`Approve ${req.email}`} onClick={() => { void approve() }}>Approve</button>
      <label for={`reason-${req.id}`}>Reason to deny (optional)</label>
      <input id={`reason-${req.id}`} maxLength={500} value={reason} onInput={e => { setReason(e.currentTarget.value) }} />
      <button type='button' aria-label={`Deny ${req.email}`} onClick={() => { void deny() }}>Deny</button>
    </div>
  )
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
      <p class='muted'>Members ask for invitations (on their profile here, or in Slack) when the invite policy is “request” (Settings). Approving sends the invitation.</p>
      <ProblemNote problem={actionProblem} />
      <ListState items={items} problem={problem} retry={reload} empty='No pending requests.'>
        <ul class='cards'>
          {items?.map(req => (
            <li key={req.id} class='card'>
              <p class='address'><strong>{req.email}</strong> asked to join as {req.role}, {when(req.createdAt)}; the request expires {when(req.expiresAt)}.</p>
              <Decide req={req} onDone={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />
            </li>
          ))}
        </ul>
        {pager}
      </ListState>
    </>
  )
}
