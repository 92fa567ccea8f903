import { useState } from 'preact/hooks'
import { announce } from '../announce.js'
import { copy } from './copyable.js'

/** A secret shown once, with a copy button; dismissed, it is gone from the page. */
export function OnceSecret ({ label, secret, onDone, after = 'Afterwards the console shows only its prefix.' }: {
  label: string, secret: string, onDone: () => void, after?: string
}) {
  const [copied, setCopied] = useState(false)
  return (
    <div class='card secret' role='region' aria-label={label}>
      <p class='warning'><strong>Copy it now: it is shown only this once.</strong> {after}</p>
      <label for='secret-value'>{label}</label>
      <input id='secret-value' readOnly value={secret} onFocus={e => { e.currentTarget.select() }} />
      <button type='button' onClick={() => { copy(secret, () => { setCopied(true); announce('Copied to the clipboard.') }) }}>{copied ? 'Copied' : 'Copy'}</button>
      <button type='button' onClick={onDone}>I have copied it</button>
    </div>
  )
}
