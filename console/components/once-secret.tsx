import { useState } from 'preact/hooks'
import { announce } from '../announce.js'
import { copy } from './copyable.js'
import { t } from '../i18n.js'

/** A secret shown once, with a copy button; dismissed, it is gone from the page. */
export function OnceSecret ({ label, secret, onDone, after = t('secretAfter') }: {
  label: string, secret: string, onDone: () => void, after?: string
}) {
  const [copied, setCopied] = useState(false)
  return (
    <div class='card secret' role='region' aria-label={label}>
      <p class='warning'><strong>{t('secretOnce')}</strong> {after}</p>
      <label for='secret-value'>{label}</label>
      <input id='secret-value' readOnly value={secret} onFocus={e => { e.currentTarget.select() }} />
      <button type='button' onClick={() => { copy(secret, () => { setCopied(true); announce(t('copied')) }) }}>{t(copied ? 'copyDone' : 'copy')}</button>
      <button type='button' onClick={onDone}>{t('secretCopied')}</button>
    </div>
  )
}
