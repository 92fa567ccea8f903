import { useEffect, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../main.js'
import { ConfirmButton, ListState, ProblemNote, Table, announce, usePaged, when } from '../ui.js'
import { OnceSecret } from './api-keys.js'

// Invite links: a link anyone who has it may use to join as a member, after proving their address
// by e-mail. The link itself is shown once, when it is made or given a new code.

type Link = Schemas['InviteLink']

const EXPIRIES: Array<[number, string]> = [[1, '1 hour'], [24, '1 day'], [168, '7 days'], [720, '30 days'], [2160, '90 days']]
const STATUS: Record<Link['status'], string> = { active: 'active', expired: 'expired', used_up: 'used up', revoked: 'revoked' }

function CreateLink ({ onCreated, onProblem }: { onCreated: (l: Schemas['InviteLinkCreated']) => void, onProblem: (p: Problem) => void }) {
  const [maxUses, setMaxUses] = useState('')
  const [hours, setHours] = useState(168)
  const [domains, setDomains] = useState('')
  const [approval, setApproval] = useState(false)
  const submit = async (e: Event) => {
    e.preventDefault()
    const allowedDomains = [...new Set(domains.split(/[\s,;]+/).map(d => d.trim().toLowerCase()).filter(d => d !== ''))]
    const body = {
      role: 'member' as const,
      maxUses: maxUses.trim() === '' ? null : Number(maxUses),
      expiresInHours: hours,
      allowedDomains,
      requiresApproval: approval
    }
    const r = await call(api.POST('/api/invite-links', { body }))
    if (r.ok) { onCreated(r.data); setMaxUses(''); setDomains(''); announce('Invite link created: copy it now, it is shown once.') } else onProblem(r.problem)
  }
  return (
    <form class='card' onSubmit={submit} aria-labelledby='link-title'>
      <h2 id='link-title'>Create an invite link</h2>
      <p class='muted'>Anyone with the link may join as a member after confirming their e-mail address.</p>
      <label for='link-uses'>Maximum uses (empty: unlimited)</label>
      <input id='link-uses' type='number' min={1} max={100000} inputMode='numeric' value={maxUses} onInput={e => { setMaxUses(e.currentTarget.value) }} />
      <label for='link-expiry'>Expires after</label>
      <select id='link-expiry' value={String(hours)} onChange={e => { setHours(Number(e.currentTarget.value)) }}>
        {EXPIRIES.map(([h, label]) => <option key={h} value={String(h)}>{label}</option>)}
      </select>
      <label for='link-domains'>Only addresses at these domains (optional, comma-separated)</label>
      <input id='link-domains' maxLength={2000} placeholder='acme.com' value={domains} onInput={e => { setDomains(e.currentTarget.value) }} />
      <label class='check' for='link-approval'>
        <input id='link-approval' type='checkbox' checked={approval} onChange={e => { setApproval(e.currentTarget.checked) }} />
        An admin approves each person (they become invite requests)
      </label>
      <button type='submit'>Create the link</button>
    </form>
  )
}

export function InviteLinks ({ news }: ScreenProps) {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invite-links', { params: { query: cursor === undefined ? { limit: 25 } : { limit: 25, cursor } } })),
    []
  )
  useEffect(() => { if (news > 0) reload() }, [news])
  const [shown, setShown] = useState<Schemas['InviteLinkCreated'] | null>(null)
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const failed = (p: Problem) => { setActionProblem(p); announce(p.text) }
  const revoke = async (l: Link) => {
    const r = await call(api.DELETE('/api/invite-links/{linkId}', { params: { path: { linkId: l.id } } }))
    if (r.ok) { announce('The invite link was revoked.'); setActionProblem(null) } else failed(r.problem)
    reload()
  }
  const regenerate = async (l: Link) => {
    const r = await call(api.POST('/api/invite-links/{linkId}/regenerate', { params: { path: { linkId: l.id } } }))
    if (r.ok) { setShown(r.data); setActionProblem(null); announce('The link has a new code; the old one no longer works. Copy it now.') } else failed(r.problem)
    reload()
  }
  return (
    <>
      <CreateLink onCreated={l => { setShown(l); setActionProblem(null); reload() }} onProblem={failed} />
      {shown !== null && (
        <OnceSecret
          label='The invite link' secret={shown.url} onDone={() => { setShown(null) }}
          after='Afterwards the console lists the link without it; give it a new code to see one again.'
        />
      )}
      <ProblemNote problem={actionProblem} />
      <ListState items={items} problem={problem} retry={reload} empty='No invite links.'>
        <Table caption='Invite links' heads={['Status', 'Uses', 'Expires', 'Domains', 'Approval', 'Created', '']} pager={pager}>
          {items?.map(l => (
            <tr key={l.id}>
              <td>{STATUS[l.status]}</td>
              <td>{l.uses} of {l.maxUses ?? 'unlimited'}</td>
              <td>{when(l.expiresAt)}</td>
              <td>{l.allowedDomains.length === 0 ? 'any' : l.allowedDomains.join(', ')}</td>
              <td>{l.requiresApproval ? 'yes' : 'no'}</td>
              <td>{when(l.createdAt)}</td>
              <td>
                {l.status !== 'revoked' && (
                  <>
                    <ConfirmButton label='New code' confirm='Yes, replace the code' danger={false} onConfirm={async () => { await regenerate(l) }} />
                    <ConfirmButton label='Revoke' confirm='Yes, revoke the link' onConfirm={async () => { await revoke(l) }} />
                  </>
                )}
              </td>
            </tr>
          ))}
        </Table>
      </ListState>
    </>
  )
}
