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
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-domains.json'

const { t } = screenWordsOf<typeof own>('domains')

// Join by verified domain: add a domain, publish its TXT record, check it, choose who may join.

type Domain = Schemas['Domain']
type Policy = Schemas['DomainPolicy']
const POLICIES: Policy[] = ['off', 'suggest', 'auto_join']

function PolicySelect ({ id, value, onChange }: { id: string, value: Policy, onChange: (p: Policy) => void }) {
  return (
    <select id={id} value={value} onChange={e => { onChange(e.currentTarget.value as Policy) }}>
      {POLICIES.map(p => <option key={p} value={p}>{t('policy', { policy: p })}</option>)}
    </select>
  )
}

function DomainCard ({ d, onChanged }: { d: Domain, onChanged: (p: Problem | null) => void }) {
  const path = { params: { path: { domainId: d.id } } }
  const check = async () => {
    const r = await call(api.POST('/api/domains/{domainId}/verify', path))
    if (r.ok) announce(r.data.status === 'verified' ? t('isVerified', { domain: d.domain }) : r.data.checkError === null ? t('notVerifiedYet', { domain: d.domain }) : t('checkFailed', { domain: d.domain, error: r.data.checkError }))
    onChanged(r.ok ? null : r.problem)
  }
  const setPolicy = async (policy: Policy) => {
    const r = await call(api.PATCH('/api/domains/{domainId}', { ...path, body: { policy } }))
    if (r.ok) announce(t('policySet', { domain: d.domain, policy }))
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/domains/{domainId}', path))
    if (r.ok) announce(t('removed', { domain: d.domain }))
    onChanged(r.ok ? null : r.problem)
  }
  return (
    <li class='card'>
      <p class='address'><strong>{d.domain}</strong> <span class={d.status === 'verified' ? 'tag' : 'tag off'}>{t('status', { status: d.status })}</span></p>
      {d.status === 'pending' && <p class='muted'>{t('pendingHint', { when: when(d.failsAt) })}</p>}
      {d.status === 'failed' && <p class='muted'>{t('failedHint', { when: when(d.failedAt) })}</p>}
      {d.status !== 'verified' && (
        <>
          <p class='muted'>{t('recordType', { type: d.verification.type })}</p>
          <Copyable id={`name-${d.id}`} label={t('recordName')} value={d.verification.name} />
          <Copyable id={`value-${d.id}`} label={t('recordValue')} value={d.verification.value} />
        </>
      )}
      {d.checkError !== null && <p class='muted'>{t('lastCheck', { when: when(d.checkedAt), error: d.checkError })}</p>}
      {d.status === 'verified' && <p class='muted'>{t('verifiedAt', { when: when(d.verifiedAt) })}</p>}
      <label for={`policy-${d.id}`}>{t('whoMayJoinThrough', { domain: d.domain })}</label>
      <PolicySelect id={`policy-${d.id}`} value={d.policy} onChange={p => { void setPolicy(p) }} />
      <div class='actions'>
        <button type='button' aria-label={t('checkDomainNow', { domain: d.domain })} onClick={() => { void check() }}>{t('checkNow')}</button>
        <ConfirmButton label={t('remove')} name={t('removeDomain', { domain: d.domain })} confirm={t('yesRemove', { domain: d.domain })} onConfirm={remove} />
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
    if (r.ok) { setDomain(''); announce(t('added', { domain: r.data.domain })) }
    reload()
  }
  return (
    <>
      <p class='muted'>{t('intro')}</p>
      <form class='card' onSubmit={add} aria-labelledby='domain-title' ref={form.form}>
        <h2 id='domain-title'>{t('addDomain')}</h2>
        <label for='domain-name'>{t('domain')}</label>
        <input id='domain-name' required maxLength={253} placeholder='acme.com' value={domain} {...form.control('domain', 'domain-name')} onInput={e => { setDomain(e.currentTarget.value) }} />
        {form.error('domain', 'domain-name')}
        <label for='domain-policy'>{t('whoMayJoin')}</label>
        <PolicySelect id='domain-policy' value={policy} onChange={setPolicy} />
        <button type='submit'>{t('addTheDomain')}</button>
        {form.note}
      </form>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty={t('noDomains')}>
        <ul class='cards'>
          {data?.items.map(d => <DomainCard key={d.id} d={d} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />)}
        </ul>
      </ListState>
    </>
  )
}
