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
import { screenWordsOf, type ScreenWordKey } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-api-keys.json'

const { t, tParts } = screenWordsOf<typeof own>('api-keys')
type Key = ScreenWordKey<typeof own>

type Scope = Schemas['ApiKeyScope']
/** A scope's area: what comes before its colon (`members:write` → `members`; `scim` is its own). */
const areaOf = (scope: Scope): string => scope.split(':')[0] ?? scope
/** The headings of the areas the console knows; an area new to the contract shows under its own name. */
const TITLES: Partial<Record<string, Key>> = {
  invitations: 'areaInvitations',
  members: 'areaMembers',
  requests: 'areaRequests',
  links: 'areaLinks',
  domains: 'areaDomains',
  sso: 'areaSso',
  workspace: 'areaWorkspace',
  webhooks: 'areaWebhooks',
  events: 'areaEvents',
  audit: 'areaAudit',
  'audit-streams': 'areaAuditStreams',
  scim: 'areaScim'
}
/** What each scope allows, in the reader's language: the contract's descriptions, translated. */
const SCOPE_WORDS: Partial<Record<string, Key>> = {
  'workspace:read': 'scopeWorkspaceRead',
  'workspace:write': 'scopeWorkspaceWrite',
  'members:read': 'scopeMembersRead',
  'members:write': 'scopeMembersWrite',
  'members:admin': 'scopeMembersAdmin',
  'invitations:read': 'scopeInvitationsRead',
  'invitations:write': 'scopeInvitationsWrite',
  'requests:read': 'scopeRequestsRead',
  'requests:write': 'scopeRequestsWrite',
  'links:read': 'scopeLinksRead',
  'links:write': 'scopeLinksWrite',
  'domains:read': 'scopeDomainsRead',
  'domains:write': 'scopeDomainsWrite',
  'webhooks:read': 'scopeWebhooksRead',
  'webhooks:write': 'scopeWebhooksWrite',
  'sso:read': 'scopeSsoRead',
  'sso:write': 'scopeSsoWrite',
  'events:read': 'scopeEventsRead',
  'audit:read': 'scopeAuditRead',
  'audit-streams:read': 'scopeAuditStreamsRead',
  'audit-streams:write': 'scopeAuditStreamsWrite',
  scim: 'scopeScim'
}
/** The areas, each once: those above in their order, then any other of the catalogue (every scope is offered). */
const AREAS = [...new Set([...Object.keys(TITLES), ...apiKeyScopes.map(s => areaOf(s.scope))])]
  .filter(area => apiKeyScopes.some(s => areaOf(s.scope) === area))
const titleOf = (area: string): string => { const key = TITLES[area]; return key === undefined ? area : t(key) }
const WORDS: ReadonlyMap<string, string> = new Map(apiKeyScopes.map(s => [s.scope, s.description]))
/**
 * The scope's words in the reader's language; a scope new to the contract in the contract's own
 * (English) words; a scope it does not list (a key's scopes are open) by its name.
 */
function wordsOf (scope: string): string {
  const key = SCOPE_WORDS[scope]
  return key !== undefined ? t(key) : WORDS.get(scope) ?? scope
}
const EXPIRIES = [30, 90, 365, null]
const expiryLabel = (days: number | null): string => days === null ? t('never') : days === 365 ? t('aYear') : t('days', { days })
const DAY_MS = 24 * 60 * 60 * 1000
/** Keys expiring within this many days are flagged. */
const WARN_DAYS = 14

/** "in 3 days" / "expired" / null (no expiry, or far off) for the warning column and banner. */
function expiryWarning (k: Schemas['ApiKey'], now: number): string | null {
  if (k.expiresAt === null) return null
  const days = Math.ceil((Date.parse(k.expiresAt) - now) / DAY_MS)
  if (days <= 0) return t('expired')
  if (days <= WARN_DAYS) return t('expiresIn', { days })
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
          <legend>{titleOf(area)}</legend>
          {apiKeyScopes.filter(s => areaOf(s.scope) === area).map(({ scope }) => (
            <label key={scope} class='check'>
              <input type='checkbox' checked={chosen.has(scope)} onChange={e => { toggle(scope, e.currentTarget.checked) }} />
              <span><Prose text={wordsOf(scope)} /> <code>{scope}</code></span>
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
    if (scopes.size === 0) { announce(t('chooseScope')); return }
    const body: Schemas['CreateApiKeyRequest'] = {
      name: name.trim(),
      // In the catalogue's order, whatever the order of the clicks.
      scopes: apiKeyScopes.map(s => s.scope).filter(s => scopes.has(s)),
      ...(expiry !== null ? { expiresAt: new Date(Date.now() + expiry * DAY_MS).toISOString() } : {})
    }
    const r = await call(api.POST('/api/api-keys', { body }))
    if (r.ok) {
      setCreated(r.data); setName(''); setScopes(new Set()); setProblem(null)
      announce(t('created', { name: r.data.name }))
    } else { setProblem(r.problem); announce(r.problem.text) }
    keys.reload()
  }
  const revoke = async (k: Schemas['ApiKey']) => {
    const r = await call(api.DELETE('/api/api-keys/{apiKeyId}', { params: { path: { apiKeyId: k.id } } }))
    setProblem(r.ok ? null : r.problem)
    announce(r.ok ? t('revoked', { name: k.name }) : r.problem.text)
    keys.reload()
  }
  const now = Date.now()
  const expiring = (items ?? []).filter(k => expiryWarning(k, now) !== null)
  return (
    <>
      <p>
        {tParts('intro', {
          reference: <a href='/api/docs'>{t('apiReference')}</a>,
          mcp: <code dir='ltr'>/api/mcp</code>,
          header: <code dir='ltr'>Authorization: Bearer &lt;key&gt;</code>
        })}
      </p>
      {expiring.length > 0 && (
        <p class='warning' role='status'>
          {t('expiringSoon', {
            count: expiring.length,
            keys: expiring.map(k => t('expiringKey', { name: k.name, warning: expiryWarning(k, now) ?? '' })).join(t('keysSeparator'))
          })}
        </p>
      )}
      <form class='card' onSubmit={create} aria-labelledby='key-title'>
        <h2 id='key-title'>{t('createKey')}</h2>
        <label for='key-name'>{t('headName')}</label>
        <input id='key-name' required maxLength={100} value={name} onInput={e => { setName(e.currentTarget.value) }} />
        <p id='scopes-hint'>{t('scopesHint')}</p>
        <ScopePicker chosen={scopes} onChange={setScopes} />
        <label for='key-expiry'>{t('expires')}</label>
        <select
          id='key-expiry' value={String(expiry)}
          onChange={e => { const v = e.currentTarget.value; setExpiry(v === 'null' ? null : Number(v)) }}
        >
          {EXPIRIES.map(days => <option key={String(days)} value={String(days)}>{expiryLabel(days)}</option>)}
        </select>
        <button type='submit'>{t('createTheKey')}</button>
      </form>
      {created !== null && <OnceSecret label={t('theKey', { name: created.name })} secret={created.secret} onDone={() => { setCreated(null) }} />}
      <ProblemNote problem={problem} />
      <ListState items={items} problem={keys.problem} retry={keys.reload} empty={t('noKeys')}>
        <Table caption={t('screenApiKeys')} heads={[t('headName'), t('headMay'), t('expires'), t('headMadeBy'), t('headLastUsed'), '']}>
          {items?.map(k => {
            const warning = expiryWarning(k, now)
            return (
              <tr key={k.id}>
                <td class='address'>{k.name} <code dir='ltr'>{k.prefix}…</code></td>
                <td><ul class='plain'>{k.scopes.map(s => <li key={s}><Prose text={wordsOf(s)} /></li>)}</ul></td>
                <td>{k.expiresAt === null ? t('never') : when(k.expiresAt)}{warning !== null && <strong class='warn'> {warning}</strong>}</td>
                <td>{k.createdByEmail === null ? t('removedAdmin') : <bdi>{k.createdByEmail}</bdi>}</td>
                <td>{when(k.lastUsedAt)}</td>
                <td><ConfirmButton label={t('revoke')} name={t('revokeKey', { name: k.name })} confirm={t('yesRevoke', { name: k.name })} onConfirm={async () => { await revoke(k) }} /></td>
              </tr>
            )
          })}
        </Table>
      </ListState>
    </>
  )
}
