import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { Copyable } from '../components/copyable.js'
import { ListState } from '../components/table.js'
import { ProblemNote } from '../components/problem-note.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'

// Join by verified domain: add a domain, publish its TXT record, check it, choose who may join.

type Domain = Schemas['Domain']
type Policy = Schemas['DomainPolicy']
const POLICIES: Array<[Policy, string]> = [
  ['off', 'Off: nobody joins through it'],
  ['suggest', 'Suggest: people ask, admins approve'],
  ['auto_join', 'Auto-join: people join as members']
]

function PolicySelect ({ id, value, onChange }: { id: string, value: Policy, onChange: (p: Policy) => void }) {
  return (
    <select id={id} value={value} onChange={e => { onChange(e.currentTarget.value as Policy) }}>
      {POLICIES.map(([p, label]) => <option key={p} value={p}>{label}</option>)}
    </select>
  )
}

const STATE: Record<Domain['status'], string> = { pending: 'pending', verified: 'verified', failed: 'failed' }

function DomainCard ({ d, onChanged }: { d: Domain, onChanged: (p: Problem | null) => void }) {
  const path = { params: { path: { domainId: d.id } } }
  const check = async () => {
    const r = await call(api.POST('/api/domains/{domainId}/verify', path))
    if (r.ok) announce(r.data.status === 'verified' ? `${d.domain} is verified.` : `${d.domain}: ${r.data.checkError ?? 'not verified yet'}.`)
    onChanged(r.ok ? null : r.problem)
  }
  const setPolicy = async (policy: Policy) => {
    const r = await call(api.PATCH('/api/domains/{domainId}', { ...path, body: { policy } }))
    if (r.ok) announce(`${d.domain}: policy ${policy.replace('_', '-')}.`)
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/domains/{domainId}', path))
    if (r.ok) announce(`${d.domain} was removed.`)
    onChanged(r.ok ? null : r.problem)
  }
  return (
    <li class='card'>
      <p class='address'><strong>{d.domain}</strong> <span class={d.status === 'verified' ? 'tag' : 'tag off'}>{STATE[d.status]}</span></p>
      {d.status === 'pending' && <p class='muted'>Publish this DNS record, then check. Unverified, it fails {when(d.failsAt)}.</p>}
      {d.status === 'failed' && <p class='muted'>Failed {when(d.failedAt)}: the record was not found in 30 days. Publish it and check again.</p>}
      {d.status !== 'verified' && (
        <>
          <p class='muted'>Type: {d.verification.type}</p>
          <Copyable id={`name-${d.id}`} label='Record name' value={d.verification.name} />
          <Copyable id={`value-${d.id}`} label='Record value' value={d.verification.value} />
        </>
      )}
      {d.checkError !== null && <p class='muted'>Last check {when(d.checkedAt)}: {d.checkError}</p>}
      {d.status === 'verified' && <p class='muted'>Verified {when(d.verifiedAt)}.</p>}
      <label for={`policy-${d.id}`}>Who may join through {d.domain}</label>
      <PolicySelect id={`policy-${d.id}`} value={d.policy} onChange={p => { void setPolicy(p) }} />
      <div class='actions'>
        <button type='button' aria-label={`Check ${d.domain} now`} onClick={() => { void check() }}>Check now</button>
        <ConfirmButton label='Remove' name={`Remove ${d.domain}`} confirm={`Yes, remove ${d.domain}`} onConfirm={remove} />
      </div>
    </li>
  )
}

export function Domains () {
  const { data, problem, reload } = useCall(async () => await call(api.GET('/api/domains')), [])
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const [domain, setDomain] = useState('')
  const [policy, setPolicy] = useState<Policy>('off')
  const form = useFormProblem(['domain', 'policy'])
  const add = async (e: Event) => {
    e.preventDefault()
    const r = await call(api.POST('/api/domains', { body: { domain: domain.trim(), policy } }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { setDomain(''); announce(`${r.data.domain} added: publish its DNS record, then check it.`) }
    reload()
  }
  return (
    <>
      <p class='muted'>
        People with an address at a verified domain may join this workspace from the sign-in page, as each
        domain's policy says. Sign-in through your identity provider (SSO) follows its own organization domains.
      </p>
      <form class='card' onSubmit={add} aria-labelledby='domain-title' ref={form.form}>
        <h2 id='domain-title'>Add a domain</h2>
        <label for='domain-name'>Domain</label>
        <input id='domain-name' required maxLength={253} placeholder='acme.com' value={domain} {...form.control('domain', 'domain-name')} onInput={e => { setDomain(e.currentTarget.value) }} />
        {form.error('domain', 'domain-name')}
        <label for='domain-policy'>Who may join through it</label>
        <PolicySelect id='domain-policy' value={policy} onChange={setPolicy} />
        <button type='submit'>Add the domain</button>
        {form.note}
      </form>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty='No domains.'>
        <ul class='cards'>
          {data?.items.map(d => <DomainCard key={d.id} d={d} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
    </>
  )
}
