import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { when } from '../format.js'
import { ConfirmButton } from '../components/confirm-button.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-sso.json'
import type { Kit } from './sso-form.js'

// A SAML connection's signing certificates: when one nears its expiry (the words, on the card and
// in the Edit form), and the rotation — the provider's new certificate added beside the old,
// the old removed once the provider signs with the new one. Each is saved at once.

const { t } = screenWordsOf<typeof own>('sso')

type Certificate = Schemas['SsoCertificate']

/**
 * What to do about a certificate within 30 days of its expiry, or expired (`kit.daysLeft`); null
 * when it has longer. One that a later certificate of the connection outlives is a rotation under way.
 */
function expiryWords (kit: Kit, k: Certificate, all: Certificate[], subject?: string): string | null {
  const end = Date.parse(k.notAfter)
  const days = kit.daysLeft(k)
  if (days > 30) return null
  const next = all.some(o => Date.parse(o.notAfter) > end) ? 'later' : days <= 0 ? 'expired' : 'soon'
  // `subject`: the card's words (`Certificate CN=…`); none: the list's (`This certificate`).
  return t('expiry', { which: subject === undefined ? 'this' : 'named', subject: subject ?? '', state: days <= 0 ? 'expired' : 'soon', date: when(k.notAfter), days, next })
}

/** The card's warning for each certificate near its expiry (none when all have longer). */
export function ExpiryWarnings ({ kit, certs }: { kit: Kit, certs: Certificate[] }) {
  return (
    <>
      {certs.map((k, i) => {
        const words = expiryWords(kit, k, certs, k.subject)
        return words === null ? null : <p key={i} class='warning'>{words}</p>
      })}
    </>
  )
}

/** The PEM certificates in a pasted text (several during a rotation); the text itself when none is found, for the service to refuse. */
export const certificates = (text: string): string[] => text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [text.trim()]

/** The certificates with their subject, SHA-256 fingerprint and expiry; Remove (never the last); Add a certificate. */
export function Certificates ({ kit, c, certs, id, onChanged }: {
  kit: Kit, c: Schemas['SsoConnection'], certs: Certificate[], id: string, onChanged: (p: Problem | null) => void
}) {
  const [pem, setPem] = useState('')
  const form = useFormProblem(['saml.idpCertificates'])
  const heading = useRef<HTMLHeadingElement>(null)
  // After a removal the focus goes to the heading, once the list without it is drawn.
  const removed = useRef(false)
  const listed = certs.map(k => k.fingerprintSha256).join()
  useLayoutEffect(() => {
    if (removed.current) heading.current?.focus()
    removed.current = false
  }, [listed])
  const save = async (pems: string[]) => await call(api.PATCH('/api/sso/connections/{connectionId}', {
    params: { path: { connectionId: c.id } }, body: { saml: { idpCertificates: pems } }
  }))
  const add = async (e: Event) => {
    e.preventDefault()
    const r = await save([...certs.map(k => k.pem), ...certificates(pem)])
    form.fail(r.ok ? null : r.problem)
    if (!r.ok) return
    setPem('')
    announce(t('certAdded', { name: c.name, count: r.data.saml?.idpCertificates.length ?? 0 }))
    onChanged(null)
  }
  const remove = async (i: number) => {
    const k = certs[i] as Certificate
    const r = await save(certs.filter((_, j) => j !== i).map(x => x.pem))
    if (r.ok) { removed.current = true; announce(t('certRemoved', { subject: k.subject, name: c.name })) }
    onChanged(r.ok ? null : r.problem)
  }
  return (
    <section aria-labelledby={`${id}-certs-title`}>
      <h3 id={`${id}-certs-title`} tabIndex={-1} ref={heading}>{t('signingCerts')}</h3>
      <p class='muted'>{t('rotateHint')}</p>
      <ul class='results'>
        {certs.map((k, i) => {
          const words = expiryWords(kit, k, certs)
          return (
            <li key={`${i}-${k.fingerprintSha256}`} class='result'>
              <strong>{k.subject}</strong>
              <br />SHA-256 <code>{k.fingerprintSha256}</code>
              <br />{t('expires', { date: when(k.notAfter) })}
              {words !== null && <strong class='warn'>{words}</strong>}
              {certs.length > 1 && (
                <div><ConfirmButton label={t('remove')} name={t('removeCert', { subject: k.subject, fingerprint: k.fingerprintSha256.slice(0, 11) })} confirm={t('removeYes')} onConfirm={async () => { await remove(i) }} /></div>
              )}
            </li>
          )
        })}
      </ul>
      {certs.length === 1 && <p class='muted'>{t('onlyCert')}</p>}
      <form ref={form.form} onSubmit={add}>
        <label for={`${id}-cert`}>{t('addCertLabel')}</label>
        <textarea id={`${id}-cert`} required rows={4} value={pem} {...form.control('saml.idpCertificates', `${id}-cert`)} onInput={e => { setPem(e.currentTarget.value) }} />
        {form.error('saml.idpCertificates', `${id}-cert`)}
        <button type='submit'>{t('addCert')}</button>
        {form.note}
      </form>
    </section>
  )
}
