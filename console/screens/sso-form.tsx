import type { ComponentType, JSX } from 'preact'
import type { Schemas } from '../api.js'
import type { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-sso.json'

const { t, tParts } = screenWordsOf<typeof own>('sso')

// What the SSO screen's two forms share, Add a connection and each connection's Edit form: the
// fields (name, domains, the protocol's settings, accounts and role), what they hold (`Draft`),
// and the contract's names of those fields, which the refusals' `details` name.

type Protocol = Schemas['SsoProtocol']
type Form = ReturnType<typeof useFormProblem>
type Certificate = Schemas['SsoCertificate']

/** A text field of the form: its label, its input and its refusal. */
type TextField = (field: string, key: string, label: string, more?: Record<string, unknown>, hint?: string) => JSX.Element

/** The SAML fields (`SamlFields`, sso-edit.tsx). */
export interface SamlProps {
  id: string
  d: Draft
  set: (change: Partial<Draft>) => void
  form: Form
  text: TextField
  existing: boolean
}

export const PROTOCOLS: Record<Protocol, string> = { oidc: 'OpenID Connect', saml: 'SAML 2.0' }

/** What a connection's form holds: the text fields by the contract's dotted names (`oidc.issuer`), and the choices. */
export interface Draft {
  text: Record<string, string>
  domains: string[]
  accounts: Schemas['SsoAccounts']
  role: Schemas['Role']
  byUrl: boolean
  idpInitiated: boolean
}

/** A new connection's empty form (an existing one's: sso-edit.tsx's `draftOf`). */
export const emptyDraft = (): Draft => ({ text: {}, domains: [], accounts: 'existing', role: 'member', byUrl: true, idpInitiated: false })

/** A text field as sent: trimmed. */
export const valueOf = (d: Draft, field: string): string => (d.text[field] ?? '').trim()

/** The contract's names of the fields `ConnectionFields` shows: a refusal naming another is said at the form's foot. */
export function fieldNames (protocol: Protocol, d: Draft, entra: boolean): string[] {
  return ['name', 'domains', 'accounts', 'defaultRole', ...(protocol === 'oidc'
    ? ['oidc.issuer', 'oidc.clientId', 'oidc.clientSecret', ...(entra ? ['oidc.tenantId'] : [])]
    : [d.byUrl ? 'saml.idpMetadataUrl' : 'saml.idpMetadataXml', 'saml.idpInitiated'])]
}

/**
 * The fields of a connection, their ids under `id`. `domains`: the domains to offer (null while
 * they load); `existing`: the connection's Edit form, where an empty client secret keeps the
 * stored one and an empty tenant ID clears it (and the certificates are its own panel's, not fields).
 */
export function ConnectionFields ({ id, protocol, d, set, form, domains, entra, existing = false, issuerPlaceholder, Saml }: {
  id: string
  protocol: Protocol
  d: Draft
  set: (change: Partial<Draft>) => void
  form: Form
  domains: string[] | null
  entra: boolean
  existing?: boolean
  issuerPlaceholder?: string
  /** The SAML fields (sso-edit.tsx's `SamlFields`, a chunk fetched when SAML is chosen); null while it loads. */
  Saml: ComponentType<SamlProps> | null
}) {
  const setText = (field: string, value: string) => { set({ text: { ...d.text, [field]: value } }) }
  const text: TextField = (field, key, label, more = {}, hint) => (
    <>
      <label for={`${id}-${key}`}>{label}</label>
      <input
        id={`${id}-${key}`} required value={d.text[field] ?? ''} {...more}
        {...form.control(field, `${id}-${key}`, hint === undefined ? undefined : `${id}-${key}-hint`)}
        onInput={e => { setText(field, e.currentTarget.value) }}
      />
      {hint !== undefined && <p id={`${id}-${key}-hint`} class='muted'>{hint}</p>}
      {form.error(field, `${id}-${key}`)}
    </>
  )
  const domainControl = form.control('domains', `${id}-domains`)
  return (
    <>
      {text('name', 'name', t('nameLabel'), { maxLength: 100, placeholder: 'Okta' })}
      <fieldset>
        <legend>{t('domainsServed')}</legend>
        {domains?.length === 0 && <p class='muted'>{tParts('noVerifiedDomain', { domains: <a href='/console/domains'>{t('screenDomains')}</a> })}</p>}
        {domains?.map((x, i) => (
          <label class='check' key={x}>
            <input
              type='checkbox' checked={d.domains.includes(x)} {...(i === 0 ? domainControl : { 'aria-describedby': domainControl['aria-describedby'] })}
              onChange={e => { set({ domains: e.currentTarget.checked ? [...d.domains, x] : d.domains.filter(y => y !== x) }) }}
            />{x}
          </label>
        ))}
        {form.error('domains', `${id}-domains`)}
      </fieldset>
      {protocol === 'oidc' && (
        <>
          {text('oidc.issuer', 'issuer', t('issuer'), { type: 'url', maxLength: 2000, placeholder: issuerPlaceholder })}
          {entra && text('oidc.tenantId', 'tenant', t('tenantId'), { maxLength: 36, required: !existing })}
          {text('oidc.clientId', 'client', t('clientId'), { maxLength: 255, autocomplete: 'off' })}
          {text('oidc.clientSecret', 'secret', t('clientSecret'), { type: 'password', maxLength: 1024, autocomplete: 'off', required: !existing },
            existing ? t('secretHint') : undefined)}
        </>
      )}
      {protocol === 'saml' && Saml !== null && <Saml id={id} d={d} set={set} form={form} text={text} existing={existing} />}
      <fieldset>
        <legend>{t('accountsLegend')}</legend>
        <label class='check'><input type='radio' name={`${id}-accounts`} checked={d.accounts === 'existing'} onChange={() => { set({ accounts: 'existing' }) }} />{t('accountsExisting')}</label>
        <label class='check'><input type='radio' name={`${id}-accounts`} checked={d.accounts === 'create'} onChange={() => { set({ accounts: 'create' }) }} />{t('accountsCreate')}</label>
        {d.accounts === 'create' && (
          <>
            <label for={`${id}-role`}>{t('theirRole')}</label>
            <select id={`${id}-role`} value={d.role} {...form.control('defaultRole', `${id}-role`)} onChange={e => { set({ role: e.currentTarget.value as Schemas['Role'] }) }}>
              <option value='member'>{t('roleMember')}</option>
              <option value='admin'>{t('roleAdmin')}</option>
            </select>
            {form.error('defaultRole', `${id}-role`)}
          </>
        )}
      </fieldset>
    </>
  )
}

const DAY_MS = 86_400_000

/** Whole days until a certificate expires, rounded up as the service's e-mails count them (29.2 days is "30 days"); 0 or less: expired. */
const daysLeft = (k: Certificate, now = Date.now()): number => Math.ceil((Date.parse(k.notAfter) - now) / DAY_MS)

/** A certificate within 30 days of its expiry, or expired: the card and the certificates' panel say what to do. */
export const nearExpiry = (k: Certificate): boolean => daysLeft(k) <= 30

/** What the Edit form, the certificates' panel and its warnings (their own chunk, sso-edit.tsx) use of this module, handed by the screen. */
export interface Kit {
  ConnectionFields: typeof ConnectionFields
  fieldNames: typeof fieldNames
  valueOf: typeof valueOf
  daysLeft: typeof daysLeft
}

export const KIT: Kit = { ConnectionFields, fieldNames, valueOf, daysLeft }
