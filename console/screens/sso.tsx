import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { Copyable } from '../components/copyable.js'
import { ProblemNote } from '../components/problem-note.js'
import { ListState } from '../components/table.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { readerLanguage, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-sso.json'
import { ConnectionFields, emptyDraft, fieldNames, KIT, nearExpiry, PROTOCOLS, valueOf, type Draft } from './sso-form.js'

const { t } = screenWordsOf<typeof own>('sso')

// Single sign-on through the company's own identity provider (docs/sso.md): the connections, each
// with what to paste into the provider, a test sign-in, the enforcement switch and an Edit form
// (sso-edit.tsx; the certificates' rotation and expiry: sso-certificates.tsx); a connection made
// with a short guide for Okta, Entra ID or Google Workspace (the guides' words are docs/sso.md's).
// Both forms' fields: sso-form.tsx.

type Connection = Schemas['SsoConnection']
type Protocol = Schemas['SsoProtocol']
type Provider = 'okta' | 'entra' | 'google' | 'other'

const PROVIDERS: Array<[Provider, string | null]> = [['okta', 'Okta'], ['entra', 'Microsoft Entra ID'], ['google', 'Google Workspace'], ['other', null]]

// What to do at the provider, by provider and protocol (the messages `guide<Provider><Protocol>`):
// `redirect URI`, `ACS URL` and `SP entity ID` are shown on the connection's card once it is saved.
const GUIDES = {
  okta: { oidc: 'guideOktaOidc', saml: 'guideOktaSaml' },
  entra: { oidc: 'guideEntraOidc', saml: 'guideEntraSaml' },
  google: { oidc: 'guideGoogleOidc', saml: 'guideGoogleSaml' },
  other: { oidc: 'guideOtherOidc', saml: 'guideOtherSaml' }
} as const

/** A provider's name ('other': the words for another provider). */
const providerName = (p: Provider): string => PROVIDERS.find(([x]) => x === p)?.[1] ?? t('providerOther')

/** A connection's domains as the reader's language lists them (none: the words for none). */
const domainList = (domains: string[]): string => domains.length === 0 ? t('noDomain') : new Intl.ListFormat(readerLanguage(), { type: 'unit', style: 'short' }).format(domains)

/**
 * The SSO screen's rarer parts (sso-edit.tsx): the Edit form, the certificates' panel, the expiry
 * warnings and the SAML fields, a chunk fetched once first needed, not with the screen.
 */
type Later = typeof import('./sso-edit.js')
let laterChunk: Promise<Later> | undefined
/** That chunk, fetched once (again after a failure). */
const loadLater = async (): Promise<Later> => await (laterChunk ??= import('./sso-edit.js').catch(err => {
  laterChunk = undefined
  throw err
}))

/** That chunk's module once `needed` (null until it is loaded). */
function useLater (needed: boolean): Later | null {
  const [loaded, setLoaded] = useState<Later | null>(null)
  useEffect(() => {
    if (needed && loaded === null) loadLater().then(setLoaded, () => {})
  }, [needed, loaded])
  return loaded
}

function ConnectionCard ({ c, focus, verified, onChanged }: { c: Connection, focus: boolean, verified: string[] | null, onChanged: (p: Problem | null) => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const editButton = useRef<HTMLButtonElement>(null)
  const [editing, setEditing] = useState(false)
  const soon = c.saml?.idpCertificates.some(nearExpiry) ?? false
  const later = useLater(editing || soon)
  const closeEdit = () => { setEditing(false); editButton.current?.focus() }
  useLayoutEffect(() => { if (focus) heading.current?.focus() }, [focus])
  const path = { params: { path: { connectionId: c.id } } }
  const domains = domainList(c.domains)
  // The switch shows what was asked at once, and what the service holds once it answers.
  const [on, setOn] = useState(c.required)
  useEffect(() => { setOn(c.required) }, [c.required])
  const setRequired = async (required: boolean) => {
    setOn(required)
    const r = await call(api.PATCH('/api/sso/connections/{connectionId}', { ...path, body: { required } }))
    if (r.ok) announce(t('requiredSaid', { name: c.name, required: required ? 'yes' : 'no', domains }))
    else setOn(c.required)
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/sso/connections/{connectionId}', path))
    if (r.ok) announce(t('deleted', { name: c.name, domains }))
    onChanged(r.ok ? null : r.problem)
  }
  const id = `sso-${c.id}`
  return (
    <li class='card'>
      <h2 id={`${id}-title`} tabIndex={-1} ref={heading} class='address'>
        {c.name} <span class='tag'>{PROTOCOLS[c.protocol]}</span> {c.required && <span class='tag off'>{t('tagRequired')}</span>}
      </h2>
      <p>{t('domainsAre', { domains })}</p>
      <p class='muted'>
        {t('accounts', { accounts: c.accounts, role: c.defaultRole ?? 'member' })}
        {c.oidc !== null && t('oidcSummary', { issuer: c.oidc.issuer, clientId: c.oidc.clientId, secret: c.oidc.clientSecretSet ? 'set' : 'none' })}
        {c.saml?.idpCertificates.map(k => t('certSummary', { subject: k.subject, date: when(k.notAfter) }))}
      </p>
      {c.saml !== null && soon && later !== null && <later.ExpiryWarnings kit={KIT} certs={c.saml.idpCertificates} />}
      <p class='muted'>{t('pasteInto')}</p>
      {c.oidc !== null && <Copyable id={`${id}-redirect`} label={t('redirectUri')} value={c.oidc.redirectUri} />}
      {c.saml !== null && (
        <>
          <Copyable id={`${id}-entity`} label={t('spEntityId')} value={c.saml.spEntityId} />
          <Copyable id={`${id}-acs`} label={t('acsUrl')} value={c.saml.acsUrl} />
          <Copyable id={`${id}-metadata`} label={t('spMetadataUrl')} value={c.saml.spMetadataUrl} />
        </>
      )}
      <label class='check' for={`${id}-required`}>
        <input id={`${id}-required`} type='checkbox' role='switch' checked={on} aria-describedby={`${id}-required-hint`} onChange={e => { void setRequired(e.currentTarget.checked) }} />
        {t('requireThrough', { name: c.name })}
      </label>
      <p id={`${id}-required-hint`} class='muted'>{t('requiredHint')}</p>
      <div class='actions'>
        <a href={`/api/oauth/sso?connection=${encodeURIComponent(c.id)}`} target='_blank' rel='noopener noreferrer' aria-describedby={`${id}-test-hint`}>{t('testSignIn')}</a>{' '}
        <button type='button' ref={editButton} aria-label={t('editName', { name: c.name })} aria-expanded={editing} onClick={() => { setEditing(!editing) }}>{t('edit')}</button>
        <ConfirmButton label={t('delete')} name={t('deleteName', { name: c.name })} confirm={t('deleteYes', { name: c.name })} onConfirm={remove} />
      </div>
      <p id={`${id}-test-hint`} class='muted'>{t('testHint')}</p>
      {editing && later !== null && (
        <later.EditForm
          kit={KIT} c={c} id={`${id}-edit`} verified={verified} onCancel={closeEdit} onChanged={onChanged}
          onSaved={saved => { announce(t('saved', { name: saved.name })); closeEdit(); onChanged(null) }}
        />
      )}
    </li>
  )
}

function CreateForm ({ verified, onCreated }: { verified: string[] | null, onCreated: (c: Connection) => void }) {
  const [provider, setProvider] = useState<Provider>('okta')
  const [protocol, setProtocol] = useState<Protocol>('oidc')
  const [d, setD] = useState(emptyDraft)
  const set = (change: Partial<Draft>) => { setD(x => ({ ...x, ...change })) }
  const [required, setRequired] = useState(false)
  const entra = provider === 'entra' && protocol === 'oidc'
  const later = useLater(protocol === 'saml')
  const form = useFormProblem([...fieldNames(protocol, d, entra), ...(protocol === 'saml' ? ['saml.idpCertificates'] : [])])
  const create = async (e: Event) => {
    e.preventDefault()
    const value = (field: string) => valueOf(d, field)
    // SAML's fields are the rarer parts' chunk's (useLater): a submit before it arrived waits for
    // it; one that cannot be fetched says so, and nothing is sent.
    const saml = protocol === 'oidc' ? null : later ?? await loadLater().catch(() => null)
    if (protocol === 'saml' && saml === null) {
      form.fail({ status: 0, code: undefined, text: t('screenLoadFailed', { title: t('screenSso') }), retryAfter: undefined, fields: [] })
      return
    }
    const settings = saml === null
      ? { oidc: { issuer: value('oidc.issuer'), clientId: value('oidc.clientId'), clientSecret: value('oidc.clientSecret'), ...(entra ? { tenantId: value('oidc.tenantId') } : {}) } }
      : { saml: saml.samlSettings(d, value) }
    const body = { name: value('name'), protocol, domains: d.domains, accounts: d.accounts, required, ...(d.accounts === 'create' ? { defaultRole: d.role } : {}), ...settings }
    const r = await call(api.POST('/api/sso/connections', { body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { set({ text: {}, domains: [], idpInitiated: false }); setRequired(false); onCreated(r.data) }
  }
  return (
    <form class='card' onSubmit={create} aria-labelledby='sso-new' ref={form.form}>
      <h2 id='sso-new'>{t('addConnection')}</h2>
      <label for='sso-provider'>{t('provider')}</label>
      <select id='sso-provider' value={provider} onChange={e => { setProvider(e.currentTarget.value as Provider) }}>
        {PROVIDERS.map(([p]) => <option key={p} value={p}>{providerName(p)}</option>)}
      </select>
      <fieldset>
        <legend>{t('protocol')}</legend>
        {(['oidc', 'saml'] as const).map(p => (
          <label class='check' key={p}><input type='radio' name='sso-protocol' checked={protocol === p} onChange={() => { setProtocol(p) }} />{PROTOCOLS[p]}</label>
        ))}
      </fieldset>
      <p id='sso-guide' class='warning'><strong>{t('guideFor', { provider: providerName(provider), protocol: PROTOCOLS[protocol] })}</strong> {t(GUIDES[provider][protocol], { lt: '<', gt: '>' })}</p>
      <ConnectionFields
        id='sso' protocol={protocol} d={d} set={set} form={form} domains={verified} entra={entra}
        issuerPlaceholder={provider === 'google' ? 'https://accounts.google.com' : 'https://acme.okta.com'} Saml={later?.SamlFields ?? null}
      />
      <label class='check' for='sso-required'>
        <input id='sso-required' type='checkbox' role='switch' checked={required} aria-describedby='sso-required-hint' onChange={e => { setRequired(e.currentTarget.checked) }} />
        {t('requireThroughIt')}
      </label>
      <p id='sso-required-hint' class='muted'>{t('requiredHintNew', { hint: t('requiredHint') })}</p>
      <button type='submit'>{t('addTheConnection')}</button>
      {form.note}
    </form>
  )
}

export function Sso () {
  const { data, problem, reload } = useCall(async () => await call(api.GET('/api/sso/connections')), [])
  const domains = useCall(async () => await call(api.GET('/api/domains')), [])
  const [actionProblem, setActionProblem] = useState<Problem | null>(null)
  const [created, setCreated] = useState<string | null>(null)
  const verified = domains.data?.items.filter(d => d.status === 'verified').map(d => d.domain) ?? null
  return (
    <>
      <p class='muted'>{t('intro')}</p>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty={t('noConnection')}>
        <ul class='cards' aria-label={t('connections')}>
          {data?.items.map(c => (
            <ConnectionCard key={c.id} c={c} focus={c.id === created} verified={verified} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />
          ))}
        </ul>
      </ListState>
      <ProblemNote problem={domains.problem} retry={domains.reload} />
      <CreateForm
        verified={verified}
        onCreated={c => {
          announce(t('added', { name: c.name, protocol: c.protocol }))
          setCreated(c.id)
          setActionProblem(null)
          reload()
        }}
      />
    </>
  )
}
