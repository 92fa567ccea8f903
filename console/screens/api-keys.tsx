import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import type { ScreenProps } from '../screen.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { OnceSecret } from '../components/once-secret.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState, Table } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { apiKeyScopes } from '../../src/generated/api-key-scopes.js'
import { Prose } from '../components/prose.js'

type Scope = Schemas['ApiKeyScope']
/** A scope's area: what comes before its colon (`members:write` → `members`; `scim` is its own). */
const areaOf = (scope: Scope): string => scope.split(':')[0] ?? scope
/** The headings of the areas the console knows; an area new to the contract shows under its own name. */
const TITLES: Record<string, string> = {
  invitations: 'Invite people and manage invitations',
  members: 'Members and their roles',
  requests: 'Invite requests',
  links: 'Invite links',
  domains: 'Verified domains',
  sso: 'Single sign-on connections',
  workspace: 'The workspace and its settings',
  webhooks: 'Webhooks',
  events: 'The event feed',
  audit: 'The audit trail',
  'audit-streams': 'Audit streams to a SIEM',
  scim: 'The company directory (its key is made on the Directory screen)'
}
/** The areas, each once: those above in their order, then any other of the catalogue (every scope is offered). */
const AREAS = [...new Set([...Object.keys(TITLES), ...apiKeyScopes.map(s => areaOf(s.scope))])]
  .filter(area => apiKeyScopes.some(s => areaOf(s.scope) === area))
const WORDS: ReadonlyMap<string, string> = new Map(apiKeyScopes.map(s => [s.scope, s.description]))
/** The scope's words, from the contract's catalogue; a scope it does not list (a key's scopes are open) by its name. */
const wordsOf = (scope: string): string => WORDS.get(scope) ?? scope
const EXPIRIES: Array<{ days: number | null, label: string }> = [
  { days: 30, label: '30 days' }, { days: 90, label: '90 days' }, { days: 365, label: 'A year' }, { days: null, label: 'Never' }
]
const DAY_MS = 24 * 60 * 60 * 1000
/** Keys expiring within this many days are flagged. */
const WARN_DAYS = 14

/** "in 3 days" / "expired" / null (no expiry, or far off) for the warning column and banner. */
function expiryWarning (k: Schemas['ApiKey'], now: number): string | null {
  if (k.expiresAt === null) return null
  const days = Math.ceil((Date.parse(k.expiresAt) - now) / DAY_MS)
  if (days <= 0) return 'Expired: it no longer works'
  if (days <= WARN_DAYS) return `Expires in ${days} day${days === 1 ? '' : 's'}`
  return null
}

function ScopePicker ({ chosen, onChange }: { chosen: Set<Scope>, onChange: (next: Set<Scope>) => void }) {
  const toggle = (scope: Scope, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(scope); else next.delete(scope)
    onChange(next)
  }
  return (
    <div class='scopes'>
      {AREAS.map(area => (
        <fieldset key={area}>
          <legend>{TITLES[area] ?? area}</legend>
          {apiKeyScopes.filter(s => areaOf(s.scope) === area).map(({ scope, description }) => (
            <label key={scope} class='check'>
              <input type='checkbox' checked={chosen.has(scope)} onChange={e => { toggle(scope, e.currentTarget.checked) }} />
              <span><Prose text={description} /> <code>{scope}</code></span>
            </label>
          ))}
        </fieldset>
      ))}
    </div>
  )
}

export function ApiKeys (_props: ScreenProps) {
  const keys = useCall(async () => await call(api.GET('/api/api-keys')), [])
  const items = keys.data?.items ?? null
  const [problem, setProblem] = useState<Problem | null>(null)
  const [name, setName] = useState('')
  const [scopes, setScopes] = useState<Set<Scope>>(new Set())
  const [expiry, setExpiry] = useState<number | null>(90)
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null)
  const create = async (e: Event) => {
    e.preventDefault()
    if (scopes.size === 0) { announce('Choose at least one thing the key may do.'); return }
    const body: Schemas['CreateApiKeyRequest'] = {
      name: name.trim(),
      // In the catalogue's order, whatever the order of the clicks.
      scopes: apiKeyScopes.map(s => s.scope).filter(s => scopes.has(s)),
      ...(expiry !== null ? { expiresAt: new Date(Date.now() + expiry * DAY_MS).toISOString() } : {})
    }
    const r = await call(api.POST('/api/api-keys', { body }))
    if (r.ok) {
      setCreated(r.data); setName(''); setScopes(new Set()); setProblem(null)
      announce(`API key ${r.data.name} created: copy it now, it is shown once.`)
    } else { setProblem(r.problem); announce(r.problem.text) }
    keys.reload()
  }
  const revoke = async (k: Schemas['ApiKey']) => {
    const r = await call(api.DELETE('/api/api-keys/{apiKeyId}', { params: { path: { apiKeyId: k.id } } }))
    setProblem(r.ok ? null : r.problem)
    announce(r.ok ? `API key ${k.name} was revoked.` : r.problem.text)
    keys.reload()
  }
  const now = Date.now()
  const expiring = (items ?? []).filter(k => expiryWarning(k, now) !== null)
  return (
    <>
      <p>
        A key lets a script, a client generated from the contract (<a href='/api/docs'>API reference</a>) or an AI
        assistant (the MCP endpoint, <code>/api/mcp</code>) act in this workspace, sent as{' '}
        <code>Authorization: Bearer &lt;key&gt;</code>. It may do only what you choose below, and works only while
        the admin who made it is an admin here. Keys never make or revoke keys and never sign anyone in.
      </p>
      {expiring.length > 0 && (
        <p class='warning' role='status'>
          {expiring.length === 1 ? 'A key expires soon: ' : `${expiring.length} keys expire soon: `}
          {expiring.map(k => `${k.name} (${expiryWarning(k, now) ?? ''})`).join('; ')}. Make a new key before then.
        </p>
      )}
      <form class='card' onSubmit={create} aria-labelledby='key-title'>
        <h2 id='key-title'>Create an API key</h2>
        <label for='key-name'>Name</label>
        <input id='key-name' required maxLength={100} value={name} onInput={e => { setName(e.currentTarget.value) }} />
        <p id='scopes-hint'>What may the key do? Choose only what the script needs.</p>
        <ScopePicker chosen={scopes} onChange={setScopes} />
        <label for='key-expiry'>Expires</label>
        <select
          id='key-expiry' value={String(expiry)}
          onChange={e => { const v = e.currentTarget.value; setExpiry(v === 'null' ? null : Number(v)) }}
        >
          {EXPIRIES.map(x => <option key={x.label} value={String(x.days)}>{x.label}</option>)}
        </select>
        <button type='submit'>Create the key</button>
      </form>
      {created !== null && <OnceSecret label={`The key ${created.name}`} secret={created.secret} onDone={() => { setCreated(null) }} />}
      <ProblemNote problem={problem} />
      <ListState items={items} problem={keys.problem} retry={keys.reload} empty='No API keys.'>
        <Table caption='API keys' heads={['Name', 'May', 'Expires', 'Made by', 'Last used', '']}>
          {items?.map(k => {
            const warning = expiryWarning(k, now)
            return (
              <tr key={k.id}>
                <td class='address'>{k.name} <code>{k.prefix}…</code></td>
                <td><ul class='plain'>{k.scopes.map(s => <li key={s}><Prose text={wordsOf(s)} /></li>)}</ul></td>
                <td>{k.expiresAt === null ? 'Never' : when(k.expiresAt)}{warning !== null && <strong class='warn'> {warning}</strong>}</td>
                <td>{k.createdByEmail ?? 'a removed admin'}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td><ConfirmButton label='Revoke' name={`Revoke ${k.name}`} confirm={`Yes, revoke ${k.name}`} onConfirm={async () => { await revoke(k) }} /></td>
              </tr>
            )
          })}
        </Table>
      </ListState>
    </>
  )
}
