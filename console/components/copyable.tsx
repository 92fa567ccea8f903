import { announce } from '../announce.js'
import { t } from '../i18n.js'

/** Puts `value` on the clipboard; `done` says so, else the person is told to copy it themselves. */
export function copy (value: string, done: () => void): void {
  void navigator.clipboard.writeText(value).then(done, () => { announce(t('copyFailed')) })
}

/** A value to paste elsewhere (a DNS record, the SCIM base URL): read-only, selected on focus, and a copy button. */
export function Copyable ({ id, label, value }: { id: string, label: string, value: string }) {
  return (
    <div class='copyable'>
      <label for={id}>{label}</label>
      {/* A record, an address: left to right in a right-to-left page too (its leading _ stays first). */}
      <input id={id} readOnly dir='ltr' value={value} onFocus={e => { e.currentTarget.select() }} />
      <button type='button' onClick={() => { copy(value, () => { announce(t('copiedLabel', { label })) }) }}>{t('copyLabel', { label })}</button>
    </div>
  )
}
