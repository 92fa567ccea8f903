import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-sso.json'
import { certificates, Certificates } from './sso-certificates.js'

export { ExpiryWarnings } from './sso-certificates.js'
import type { Draft, Kit, SamlProps } from './sso-form.js'

// A connection's Edit form (PATCH /api/sso/connections/{id}): the fields of Add a connection filled
// with what it has, and only what was changed sent; a SAML connection's certificates below it.
// A chunk of its own with the certificates' panel, fetched at the first Edit (sso.tsx): what it
// shares with Add a connection (sso-form.tsx) the screen hands it (`kit`), as a static import of
// sso-form.tsx would make esbuild split that module into a third chunk of every first load.

const { t } = screenWordsOf<typeof own>('sso')

type Connection = Schemas['SsoConnection']

/** Save with no field changed: said at the form's foot, nothing sent. */
/** An existing connection's form as it is (never its client secret: the service does not give it). */
function draftOf (c: Connection): Draft {
  return {
    text: {
      name: c.name,
      'oidc.issuer': c.oidc?.issuer ?? '',
      'oidc.clientId': c.oidc?.clientId ?? '',
      'oidc.tenantId': c.oidc?.tenantId ?? '',
      'saml.idpMetadataUrl': c.saml?.idpMetadataUrl ?? '',
      'saml.idpMetadataXml': c.saml?.idpMetadataXml ?? ''
    },
    domains: c.domains,
    accounts: c.accounts,
    role: c.defaultRole ?? 'member',
    byUrl: (c.saml?.idpMetadataXml ?? null) === null,
    idpInitiated: c.saml?.idpInitiated ?? false
  }
}

const nothing = (): Problem => ({ status: 0, code: undefined, text: t('nothingToSave'), retryAfter: undefined, fields: [] })

/** An Entra ID issuer (login.microsoftonline.com), which pins a tenant. */
const entraIssuer = (issuer: string): boolean => /^https:\/\/login\.microsoftonline\.com\//i.test(issuer)

/**
 * Only what the form changed of `c`, as PATCH takes it: an empty client secret keeps the sealed
 * one; metadata by URL or pasted, whichever is chosen (the service clears the other).
 */
function changesOf (c: Connection, d: Draft, valueOf: Kit['valueOf']): Schemas['UpdateSsoConnectionRequest'] {
  const v = (field: string) => valueOf(d, field)
  const body: Schemas['UpdateSsoConnectionRequest'] = {}
  if (v('name') !== c.name) body.name = v('name')
  if (d.domains.length !== c.domains.length || d.domains.some(x => !c.domains.includes(x))) body.domains = d.domains
  if (d.accounts !== c.accounts) body.accounts = d.accounts
  // A role only for accounts made at first sign-in (the service refuses one with `existing`).
  if (d.accounts === 'create' && d.role !== (c.defaultRole ?? 'member')) body.defaultRole = d.role
  if (c.oidc !== null) {
    const o: Schemas['OidcSettingsUpdate'] = {}
    const tenant = v('oidc.tenantId') === '' ? null : v('oidc.tenantId')
    if (v('oidc.issuer') !== c.oidc.issuer) o.issuer = v('oidc.issuer')
    if (v('oidc.clientId') !== c.oidc.clientId) o.clientId = v('oidc.clientId')
    if (v('oidc.clientSecret') !== '') o.clientSecret = v('oidc.clientSecret')
    if (tenant !== c.oidc.tenantId) o.tenantId = tenant
    if (Object.keys(o).length > 0) body.oidc = o
  }
  if (c.saml !== null) {
    const s: Schemas['SamlSettingsUpdate'] = {}
    if (d.byUrl && v('saml.idpMetadataUrl') !== (c.saml.idpMetadataUrl ?? '')) s.idpMetadataUrl = v('saml.idpMetadataUrl')
    if (!d.byUrl && v('saml.idpMetadataXml') !== (c.saml.idpMetadataXml ?? '').trim()) s.idpMetadataXml = v('saml.idpMetadataXml')
    if (d.idpInitiated !== c.saml.idpInitiated) s.idpInitiated = d.idpInitiated
    if (Object.keys(s).length > 0) body.saml = s
  }
  return body
}

export function EditForm ({ kit, c, id, verified, onSaved, onCancel, onChanged }: {
  kit: Kit
  c: Connection
  id: string
  /** The workspace's verified domains (null while they load). */
  verified: string[] | null
  onSaved: (saved: Connection) => void
  onCancel: () => void
  onChanged: (p: Problem | null) => void
}) {
  // What the form opened with: a field the person did not change is not sent, even if the list
  // was read again meanwhile (a certificate added below).
  const [opened] = useState(c)
  const [d, setD] = useState(() => draftOf(opened))
  const set = (change: Partial<Draft>) => { setD(x => ({ ...x, ...change })) }
  // Entra ID's tenant: shown while the issuer is Entra's, or the connection has one to clear.
  const entra = opened.oidc !== null && (opened.oidc.tenantId !== null || entraIssuer(kit.valueOf(d, 'oidc.issuer')))
  const form = useFormProblem(kit.fieldNames(c.protocol, d, entra))
  // While the workspace's verified domains load, the connection's own (each one of them).
  const domains = verified ?? (c.domains.length === 0 ? null : c.domains)
  const save = async (e: Event) => {
    e.preventDefault()
    const body = changesOf(opened, d, kit.valueOf)
    if (Object.keys(body).length === 0) { form.fail(nothing()); return }
    const r = await call(api.PATCH('/api/sso/connections/{connectionId}', { params: { path: { connectionId: c.id } }, body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) onSaved(r.data)
  }
  return (
    <>
      <form ref={form.form} onSubmit={save} aria-labelledby={`${id}-title`}>
        <h3 id={`${id}-title`}>{t('editName', { name: c.name })}</h3>
        <kit.ConnectionFields id={id} protocol={c.protocol} d={d} set={set} form={form} domains={domains} entra={entra} existing Saml={SamlFields} />
        <button type='submit'>{t('saveChanges')}</button>
        <button type='button' onClick={onCancel}>{t('cancel')}</button>
        {form.note}
      </form>
      {c.saml !== null && <Certificates kit={kit} c={c} certs={c.saml.idpCertificates} id={id} onChanged={onChanged} />}
    </>
  )
}

/**
 * A SAML connection's fields in both forms (ConnectionFields): the provider's metadata, by URL or
 * pasted, the signing certificates (a new connection's; an existing one's are its own panel's,
 * `Certificates`), IdP-initiated sign-in.
 */
export function SamlFields ({ id, d, set, form, text, existing }: SamlProps) {
  return (
    <>
      <fieldset>
        <legend>{t('metadata')}</legend>
        <label class='check'><input type='radio' name={`${id}-metadata`} checked={d.byUrl} onChange={() => { set({ byUrl: true }) }} />{t('byUrl')}</label>
        <label class='check'><input type='radio' name={`${id}-metadata`} checked={!d.byUrl} onChange={() => { set({ byUrl: false }) }} />{t('pasted')}</label>
      </fieldset>
      {d.byUrl && text('saml.idpMetadataUrl', 'metadata-url', t('metadataUrl'), { type: 'url', maxLength: 2000 })}
      {!d.byUrl && (
        <>
          <label for={`${id}-metadata-xml`}>{t('metadataXml')}</label>
          <textarea id={`${id}-metadata-xml`} required rows={4} value={d.text['saml.idpMetadataXml'] ?? ''} {...form.control('saml.idpMetadataXml', `${id}-metadata-xml`)} onInput={e => { set({ text: { ...d.text, 'saml.idpMetadataXml': e.currentTarget.value } }) }} />
          {form.error('saml.idpMetadataXml', `${id}-metadata-xml`)}
        </>
      )}
      {!existing && (
        <>
          <label for={`${id}-certs`}>{t('certsLabel')}</label>
          <textarea id={`${id}-certs`} required rows={4} value={d.text['saml.idpCertificates'] ?? ''} {...form.control('saml.idpCertificates', `${id}-certs`)} onInput={e => { set({ text: { ...d.text, 'saml.idpCertificates': e.currentTarget.value } }) }} />
          {form.error('saml.idpCertificates', `${id}-certs`)}
        </>
      )}
      <label class='check' for={`${id}-idp-initiated`}>
        <input id={`${id}-idp-initiated`} type='checkbox' checked={d.idpInitiated} {...form.control('saml.idpInitiated', `${id}-idp-initiated`, `${id}-idp-initiated-hint`)} onChange={e => { set({ idpInitiated: e.currentTarget.checked }) }} />
        {t('idpInitiated')}
      </label>
      <p id={`${id}-idp-initiated-hint`} class='muted'>{t('idpInitiatedHint')}</p>
      {form.error('saml.idpInitiated', `${id}-idp-initiated`)}
    </>
  )
}

/** A new SAML connection's settings as POST takes them (`value`: a field as sent): the metadata by URL or pasted, the certificates pasted. */
export function samlSettings (d: Draft, value: (field: string) => string): Schemas['SamlSettingsRequest'] {
  return {
    ...(d.byUrl ? { idpMetadataUrl: value('saml.idpMetadataUrl') } : { idpMetadataXml: value('saml.idpMetadataXml') }),
    idpCertificates: certificates(value('saml.idpCertificates')),
    ...(d.idpInitiated ? { idpInitiated: true } : {})
  }
}
