import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { t } from '../i18n.js'

/**
 * A button that asks once more before it acts: the confirm button takes the focus, Cancel returns
 * it. `label` is what shows; `name`, when given, is the accessible name carrying the target
 * ("Remove" shown, "Remove ada@example.com" heard), so a narrow screen holds long targets.
 */
export function ConfirmButton ({ label, name, confirm, onConfirm, danger = true, disabled = false, describedBy }: {
  label: string
  name?: string | undefined
  confirm: string
  onConfirm: () => Promise<void> | void
  danger?: boolean
  disabled?: boolean
  describedBy?: string | undefined
}) {
  const [asking, setAsking] = useState(false)
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLButtonElement>(null)
  const yes = useRef<HTMLButtonElement>(null)
  const wasAsking = useRef(false)
  // A layout effect: the focus moves in the same task as the render that swapped the buttons,
  // never leaving it on the page's body until the next paint (a keyboard user pressing on at once).
  useLayoutEffect(() => {
    if (asking) yes.current?.focus()
    else if (wasAsking.current) first.current?.focus()
    wasAsking.current = asking
  }, [asking])
  if (!asking) {
    return (
      <button type='button' ref={first} aria-label={name} aria-describedby={describedBy} disabled={disabled} onClick={() => { setAsking(true) }}>
        {label}
      </button>
    )
  }
  return (
    <span class='confirm'>
      <button
        type='button' ref={yes} class={danger ? 'danger' : ''} disabled={busy}
        onClick={async () => { setBusy(true); try { await onConfirm() } finally { setBusy(false); setAsking(false) } }}
      >{confirm}
      </button>
      <button type='button' onClick={() => { setAsking(false) }}>{t('cancel')}</button>
    </span>
  )
}
