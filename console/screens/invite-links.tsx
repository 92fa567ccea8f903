import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { usePaged } from '../hooks/use-paged.js'

// Invite links: a link anyone who has it may use to join as a member, after proving their address
// by e-mail. The link itself is shown once, when it is made or given a new code.

type Link = Schemas['InviteLink']

const EXPIRIES: Array<[number, string]> = [[1, '1 hour'], [24, '1 day'], [168, '7 days'], [720, '30 days'], [2160, '90 days']]
const STATUS: Record<Link['status'], string> = { active: 'active', expired: 'expired', used_up: 'used up', revoked: 'revoked' }

function CreateLink ({ onCreated }: { onCreated: (l: Schemas['InviteLinkCreated']) => void }) {
  const [name, setName] = useState('')
  const [maxUses, setMaxUses] = useState('')
  const [hours, setHours] = useState(168)
  const [domains, setDomains] = useState('')
  const [approval, setApproval] = useState(false)
  const form = useFormProblem(['name', 'maxUses', 'expiresInHours', 'allowedDomains', 'requiresApproval'])
  const submit = async (e: Event) => {
    e.preventDefault()
    const allowedDomains = [...new Set(domains.split(/[\s,;]+/).map(d => d.trim().toLowerCase()).filter(d => d !== ''))]
    const body = {
      ...(name.trim() === '' ? {} : { name: name.trim() }),
      role: 'member' as const,
      maxUses: maxUses.trim() === '' ? null : Number(maxUses),
      expiresInHours: hours,
      allowedDomains,
      requiresApproval: approval
    }
    const r = await call(api.POST('/api/invite-links', { body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { onCreated(r.data); setName(''); setMaxUses(''); setDomains(''); announce('Invite link created: copy it now, it is shown once.') }
  }
  return (
    <form class='card' onSubmit={submit} aria-labelledby='link-title' ref={form.form}>
      <h2 id='link-title'>Create an invite link</h2>
      <p class='muted'>Anyone with the link may join as a member after confirming their e-mail address.</p>
      <label for='link-name'>Name (optional, for you: where you share it)</label>
      <input id='link-name' maxLength={100} placeholder='Spring fair stand' value={name} {...form.control('name', 'link-name')} onInput={e => { setName(e.currentTarget.value) }} />
      {form.error('name', 'link-name')}
      <label for='link-uses'>Maximum uses (empty: unlimited)</label>
      <input id='link-uses' type='number' min={1} max={100000} inputMode='numeric' value={maxUses} {...form.control('maxUses', 'link-uses')} onInput={e => { setMaxUses(e.currentTarget.value) }} />
      {form.error('maxUses', 'link-uses')}
      <label for='link-expiry'>Expires after</label>
      <select id='link-expiry' value={String(hours)} onChange={e => { setHours(Number(e.currentTarget.value)) }}>
        {EXPIRIES.map(([h, label]) => <option key={h} value={String(h)}>{label}</option>)}
      </select>
      <label for='link-domains'>Only addresses at these domains (optional, comma-separated)</label>
      <input id='link-domains' maxLength={2000} placeholder='acme.com' value={domains} {...form.control('allowedDomains', 'link-domains')} onInput={e => { setDomains(e.currentTarget.value) }} />
      {form.error('allowedDomains', 'link-domains')}
      <label class='check' for='link-approval'>
        <input id='link-approval' type='checkbox' checked={approval} onChange={e => { setApproval(e.currentTarget.checked) }} />
        An admin approves each person (they become invite requests)
      </label>
      <button type='submit'>Create the link</button>
      {form.note}
    </form>
  )
}

/** A link in words: its name, else its settings ("the link of Nov 27 14:10"). */
const linkName = (l: Link): string => l.name ?? `the link of ${when(l.createdAt)}`

export function InviteLinks () {
  const { items, problem, reload, pager } = usePaged(
    async cursor => await call(api.GET('/api/invite-links', { params: { query: cursor === undefined ? { limit: 25 } : { limit: 25, cursor } } })),
    []
  )
  const [shown, setShown] = useState<Schemas['InviteLinkCreated'] | null>(null)
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const failed = (p: Problem) => { setActionProblem(p); announce(p.text) }
  const revoke = async (l: Link) => {
    const r = await call(api.DELETE('/api/invite-links/{linkId}', { params: { path: { linkId: l.id } } }))
    if (r.ok) { announce(`The invite link ${linkName(l)} was revoked.`); setActionProblem(null) } else failed(r.problem)
    reload()
  }
  const regenerate = async (l: Link) => {
    const r = await call(api.POST('/api/invite-links/{linkId}/regenerate', { params: { path: { linkId: l.id } } }))
    if (r.ok) { setShown(r.data); setActionProblem(null); announce('The link has a new code; the old one no longer works. Copy it now.') } else failed(r.problem)
    reload()
  }
  return (
    <>
      <CreateLink onCreated={l => { setShown(l); setActionProblem(null); reload() }} />
      {shown !== null && (
        <OnceSecret
          label={shown.name === null ? 'The invite link' : `The invite link ${shown.name}`} secret={shown.url} onDone={() => { setShown(null) }}
          after='Afterwards the console lists the link without it; give it a new code to see one again.'
        />
      )}
      <ProblemNote problem={actionProblem} />
      <ListState items={items} problem={problem} retry={reload} empty='No invite links.'>
        <Table caption='Invite links' heads={['Name', 'Status', 'Uses', 'Expires', 'Domains', 'Who joins', 'Created', '']} pager={pager}>
          {items?.map(l => (
            <tr key={l.id}>
              <td class='address'>{l.name ?? <span class='muted'>no name</span>}</td>
              <td>{STATUS[l.status]}</td>
              <td>{l.uses} of {l.maxUses ?? 'unlimited'}</td>
              <td>{when(l.expiresAt)}</td>
              <td class='address'>{l.allowedDomains.length === 0 ? 'any' : l.allowedDomains.join(', ')}</td>
              <td>{l.requiresApproval ? 'asks; an admin approves each person' : 'joins at once'}</td>
              <td>{when(l.createdAt)}</td>
              <td>
                {l.status !== 'revoked' && (
                  <>
                    <ConfirmButton label='New code' name={`New code for ${linkName(l)}`} confirm='Yes, replace the code' danger={false} onConfirm={async () => { await regenerate(l) }} />
                    <ConfirmButton label='Revoke' name={`Revoke ${linkName(l)}`} confirm='Yes, revoke the link' onConfirm={async () => { await revoke(l) }} />
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
