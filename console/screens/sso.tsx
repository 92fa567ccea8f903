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
import { ExpiryWarnings } from './sso-certificates.js'
import { EditForm } from './sso-edit.js'
import { certificates, ConnectionFields, draftOf, fieldNames, PROTOCOLS, valueOf, type Draft } from './sso-form.js'

// Single sign-on through the company's own identity provider (docs/sso.md): the connections, each
// with what to paste into the provider, a test sign-in, the enforcement switch and an Edit form
// (sso-edit.tsx; the certificates' rotation and expiry: sso-certificates.tsx); a connection made
// with a short guide for Okta, Entra ID or Google Workspace (the guides' words are docs/sso.md's).
// Both forms' fields: sso-form.tsx.

type Connection = Schemas['SsoConnection']
type Protocol = Schemas['SsoProtocol']
type Provider = 'okta' | 'entra' | 'google' | 'other'

const PROVIDERS: Array<[Provider, string]> = [['okta', 'Okta'], ['entra', 'Microsoft Entra ID'], ['google', 'Google Workspace'], ['other', 'Another provider']]

// What to do at the provider, by provider and protocol: `redirect URI`, `ACS URL` and `SP entity ID`
// are shown on the connection's card once it is saved.
const GUIDES: Record<Provider, Record<Protocol, string>> = {
  okta: {
    oidc: 'Applications → Create App Integration → OIDC - OpenID Connect → Web Application; assign the people or groups. Copy the Client ID and the Client secret here; the issuer is your Okta domain (https://acme.okta.com) or a custom authorization server\'s issuer. Once saved, paste the redirect URI as the Sign-in redirect URI.',
    saml: 'Applications → Create App Integration → SAML 2.0. Paste the ACS URL as the Single sign-on URL (recipient and destination too) and the SP entity ID as the Audience URI; Name ID format EmailAddress, Application username Email. From the Sign On tab, give here the metadata URL and the signing certificate.'
  },
  entra: {
    oidc: 'App registrations → New registration, single tenant. Certificates & secrets → New client secret: copy its value. From Overview copy the Application (client) ID and the Directory (tenant) ID; the issuer is https://login.microsoftonline.com/<tenant id>/v2.0. Token configuration → Add optional claim → ID: email and xms_edov. Once saved, add the redirect URI (Web).',
    saml: 'Enterprise applications → New application → Create your own application (non-gallery) → Single sign-on → SAML. Basic SAML Configuration: Identifier (Entity ID) the SP entity ID, Reply URL the ACS URL. Give here the App Federation Metadata Url and the SAML signing certificate (Base64).'
  },
  google: {
    oidc: 'Google Cloud console → APIs & Services → OAuth consent screen, user type Internal; Credentials → Create OAuth client ID → Web application. The issuer is https://accounts.google.com. Once saved, add the redirect URI as an authorized redirect URI.',
    saml: 'Admin console → Apps → Web and mobile apps → Add app → Add custom SAML app. ACS URL and Entity ID: the connection\'s; Name ID format EMAIL, Name ID Primary email. Download the IdP metadata and paste it here with its certificate.'
  },
  other: {
    oidc: 'Any OpenID Connect provider: its issuer (discovery at /.well-known/openid-configuration), a client ID and secret; once saved, register the redirect URI there.',
    saml: 'Any SAML 2.0 provider: its metadata and signing certificate; once saved, give it the SP entity ID and ACS URL, or the SP metadata URL.'
  }
}

const REQUIRED_WORDS = 'E-mailed sign-in and join links are refused for addresses at its domains: people there sign in through the provider. Workspace admins keep an e-mailed link as a break-glass ("I am a workspace admin" on the sign-in page), recorded in Activity.'

function ConnectionCard ({ c, focus, verified, onChanged }: { c: Connection, focus: boolean, verified: string[] | null, onChanged: (p: Problem | null) => void }) {
  const heading = useRef<HTMLHeadingElement>(null)
  const editButton = useRef<HTMLButtonElement>(null)
  const [editing, setEditing] = useState(false)
  const closeEdit = () => { setEditing(false); editButton.current?.focus() }
  useLayoutEffect(() => { if (focus) heading.current?.focus() }, [focus])
  const path = { params: { path: { connectionId: c.id } } }
  const domains = c.domains.length === 0 ? 'no domain yet' : c.domains.join(', ')
  // The switch shows what was asked at once, and what the service holds once it answers.
  const [on, setOn] = useState(c.required)
  useEffect(() => { setOn(c.required) }, [c.required])
  const setRequired = async (required: boolean) => {
    setOn(required)
    const r = await call(api.PATCH('/api/sso/connections/{connectionId}', { ...path, body: { required } }))
    if (r.ok) announce(`${c.name}: sign-in by SSO ${required ? 'required' : 'no longer required'} for ${domains}.`)
    else setOn(c.required)
    onChanged(r.ok ? null : r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/sso/connections/{connectionId}', path))
    if (r.ok) announce(`${c.name} was deleted: ${domains} sign in by e-mailed link again.`)
    onChanged(r.ok ? null : r.problem)
  }
  const id = `sso-${c.id}`
  return (
    <li class='card'>
      <h2 id={`${id}-title`} tabIndex={-1} ref={heading} class='address'>
        {c.name} <span class='tag'>{PROTOCOLS[c.protocol]}</span> {c.required && <span class='tag off'>required</span>}
      </h2>
      <p>Domains: {domains}</p>
      <p class='muted'>
        {c.accounts === 'existing' ? 'Members only: people invited or provisioned by the directory.' : `Anyone the provider vouches for at these domains becomes ${c.defaultRole === 'admin' ? 'an admin' : 'a member'} at the first sign-in.`}
        {c.oidc !== null && ` Issuer ${c.oidc.issuer}, client ${c.oidc.clientId}${c.oidc.clientSecretSet ? ', secret set' : ''}.`}
        {c.saml?.idpCertificates.map(k => ` Certificate ${k.subject}, expires ${when(k.notAfter)}.`)}
      </p>
      {c.saml !== null && <ExpiryWarnings certs={c.saml.idpCertificates} />}
      <p class='muted'>Paste into the provider:</p>
      {c.oidc !== null && <Copyable id={`${id}-redirect`} label='Redirect URI' value={c.oidc.redirectUri} />}
      {c.saml !== null && (
        <>
          <Copyable id={`${id}-entity`} label='SP entity ID' value={c.saml.spEntityId} />
          <Copyable id={`${id}-acs`} label='ACS URL' value={c.saml.acsUrl} />
          <Copyable id={`${id}-metadata`} label='SP metadata URL' value={c.saml.spMetadataUrl} />
        </>
      )}
      <label class='check' for={`${id}-required`}>
        <input id={`${id}-required`} type='checkbox' role='switch' checked={on} aria-describedby={`${id}-required-hint`} onChange={e => { void setRequired(e.currentTarget.checked) }} />
        Require sign-in through {c.name}
      </label>
      <p id={`${id}-required-hint`} class='muted'>{REQUIRED_WORDS}</p>
      <div class='actions'>
        <a href={`/api/oauth/sso?connection=${encodeURIComponent(c.id)}`} target='_blank' rel='noopener noreferrer' aria-describedby={`${id}-test-hint`}>Test sign-in</a>{' '}
        <button type='button' ref={editButton} aria-label={`Edit ${c.name}`} aria-expanded={editing} onClick={() => { setEditing(!editing) }}>Edit</button>
        <ConfirmButton label='Delete' name={`Delete ${c.name}`} confirm={`Yes, delete ${c.name}`} onConfirm={remove} />
      </div>
      <p id={`${id}-test-hint`} class='muted'>Opens a new tab: sign in at the provider to see what it sends. Nobody is signed in here.</p>
      {editing && (
        <EditForm
          c={c} id={`${id}-edit`} verified={verified} onCancel={closeEdit} onChanged={onChanged}
          onSaved={saved => { announce(`${saved.name}: the changes are saved.`); closeEdit(); onChanged(null) }}
        />
      )}
    </li>
  )
}

function CreateForm ({ verified, onCreated }: { verified: string[] | null, onCreated: (c: Connection) => void }) {
  const [provider, setProvider] = useState<Provider>('okta')
  const [protocol, setProtocol] = useState<Protocol>('oidc')
  const [d, setD] = useState(() => draftOf())
  const set = (change: Partial<Draft>) => { setD(x => ({ ...x, ...change })) }
  const [required, setRequired] = useState(false)
  const entra = provider === 'entra' && protocol === 'oidc'
  const form = useFormProblem([...fieldNames(protocol, d, entra), ...(protocol === 'saml' ? ['saml.idpCertificates'] : [])])
  const create = async (e: Event) => {
    e.preventDefault()
    const value = (field: string) => valueOf(d, field)
    const settings = protocol === 'oidc'
      ? { oidc: { issuer: value('oidc.issuer'), clientId: value('oidc.clientId'), clientSecret: value('oidc.clientSecret'), ...(entra ? { tenantId: value('oidc.tenantId') } : {}) } }
      : {
          saml: {
            ...(d.byUrl ? { idpMetadataUrl: value('saml.idpMetadataUrl') } : { idpMetadataXml: value('saml.idpMetadataXml') }),
            idpCertificates: certificates(value('saml.idpCertificates')),
            ...(d.idpInitiated ? { idpInitiated: true } : {})
          }
        }
    const body = { name: value('name'), protocol, domains: d.domains, accounts: d.accounts, required, ...(d.accounts === 'create' ? { defaultRole: d.role } : {}), ...settings }
    const r = await call(api.POST('/api/sso/connections', { body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) { set({ text: {}, domains: [], idpInitiated: false }); setRequired(false); onCreated(r.data) }
  }
  return (
    <form class='card' onSubmit={create} aria-labelledby='sso-new' ref={form.form}>
      <h2 id='sso-new'>Add a connection</h2>
      <label for='sso-provider'>Provider</label>
      <select id='sso-provider' value={provider} onChange={e => { setProvider(e.currentTarget.value as Provider) }}>
        {PROVIDERS.map(([p, label]) => <option key={p} value={p}>{label}</option>)}
      </select>
      <fieldset>
        <legend>Protocol</legend>
        {(['oidc', 'saml'] as const).map(p => (
          <label class='check' key={p}><input type='radio' name='sso-protocol' checked={protocol === p} onChange={() => { setProtocol(p) }} />{PROTOCOLS[p]}</label>
        ))}
      </fieldset>
      <p id='sso-guide' class='warning'><strong>{PROVIDERS.find(([p]) => p === provider)?.[1]}, {PROTOCOLS[protocol]}:</strong> {GUIDES[provider][protocol]}</p>
      <ConnectionFields
        id='sso' protocol={protocol} d={d} set={set} form={form} domains={verified} entra={entra}
        issuerPlaceholder={provider === 'google' ? 'https://accounts.google.com' : 'https://acme.okta.com'}
        certificates={
          <>
            <label for='sso-certs'>Signing certificates (PEM; during a rotation, the old and the new)</label>
            <textarea id='sso-certs' required rows={4} value={d.text['saml.idpCertificates'] ?? ''} {...form.control('saml.idpCertificates', 'sso-certs')} onInput={e => { set({ text: { ...d.text, 'saml.idpCertificates': e.currentTarget.value } }) }} />
            {form.error('saml.idpCertificates', 'sso-certs')}
          </>
        }
      />
      <label class='check' for='sso-required'>
        <input id='sso-required' type='checkbox' role='switch' checked={required} aria-describedby='sso-required-hint' onChange={e => { setRequired(e.currentTarget.checked) }} />
        Require sign-in through it
      </label>
      <p id='sso-required-hint' class='muted'>{REQUIRED_WORDS} Try it with Test sign-in first.</p>
      <button type='submit'>Add the connection</button>
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
      <p class='muted'>
        People at a connection's domains sign in through the company's identity provider (OpenID Connect or SAML 2.0);
        everyone else keeps the e-mailed link.
      </p>
      <ProblemNote problem={actionProblem} />
      <ListState items={data?.items ?? null} problem={problem} retry={reload} empty='No connection yet.'>
        <ul class='cards' aria-label='Connections'>
          {data?.items.map(c => (
            <ConnectionCard key={c.id} c={c} focus={c.id === created} verified={verified} onChanged={p => { setActionProblem(p); if (p !== null) announce(p.text); reload() }} />
          ))}
        </ul>
      </ListState>
      <ProblemNote problem={domains.problem} retry={domains.reload} />
      <CreateForm
        verified={verified}
        onCreated={c => {
          announce(`${c.name} added: paste ${c.protocol === 'oidc' ? 'its redirect URI' : 'its SP entity ID and ACS URL'} into the provider, then try Test sign-in.`)
          setCreated(c.id)
          setActionProblem(null)
          reload()
        }}
      />
    </>
  )
}
