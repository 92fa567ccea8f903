import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-sso.json'
import { Certificates } from './sso-certificates.js'
import { changesOf, ConnectionFields, draftOf, entraIssuer, fieldNames, valueOf, type Draft } from './sso-form.js'

// A connection's Edit form (PATCH /api/sso/connections/{id}): the fields of Add a connection filled
// with what it has, and only what was changed sent; a SAML connection's certificates below it.

const { t } = screenWordsOf<typeof own>()

type Connection = Schemas['SsoConnection']

/** Save with no field changed: said at the form's foot, nothing sent. */
const nothing = (): Problem => ({ status: 0, code: undefined, text: t('nothingToSave'), retryAfter: undefined, fields: [] })

export function EditForm ({ c, id, verified, onSaved, onCancel, onChanged }: {
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
  const entra = opened.oidc !== null && (opened.oidc.tenantId !== null || entraIssuer(valueOf(d, 'oidc.issuer')))
  const form = useFormProblem(fieldNames(c.protocol, d, entra))
  // While the workspace's verified domains load, the connection's own (each one of them).
  const domains = verified ?? (c.domains.length === 0 ? null : c.domains)
  const save = async (e: Event) => {
    e.preventDefault()
    const body = changesOf(opened, d)
    if (Object.keys(body).length === 0) { form.fail(nothing()); return }
    const r = await call(api.PATCH('/api/sso/connections/{connectionId}', { params: { path: { connectionId: c.id } }, body }))
    form.fail(r.ok ? null : r.problem)
    if (r.ok) onSaved(r.data)
  }
  return (
    <>
      <form ref={form.form} onSubmit={save} aria-labelledby={`${id}-title`}>
        <h3 id={`${id}-title`}>{t('editName', { name: c.name })}</h3>
        <ConnectionFields id={id} protocol={c.protocol} d={d} set={set} form={form} domains={domains} entra={entra} existing />
        <button type='submit'>{t('saveChanges')}</button>
        <button type='button' onClick={onCancel}>{t('cancel')}</button>
        {form.note}
      </form>
      {c.saml !== null && <Certificates c={c} certs={c.saml.idpCertificates} id={id} onChanged={onChanged} />}
    </>
  )
}
