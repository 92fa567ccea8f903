import { useState } from 'preact/hooks'
import { api, call, type Problem, type Schemas } from '../api.js'
import { announce } from '../announce.js'
import { ProblemNote } from './problem-note.js'
import { useCall } from '../hooks/use-call.js'
import { useFormProblem } from '../hooks/use-form-problem.js'
import { decimal, screenWordsOf } from '../i18n.js'
import type own from '../../src/i18n/catalogues/en/console-settings.json'

const { t } = screenWordsOf<typeof own>('settings')

// The workspace's look (Settings): the name e-mails and pages before sign-in show, the colour of
// their links and buttons (refused below 4.5:1 against white, with the ratio it reached), the name
// its e-mails come from, and its logo (PNG, JPEG or WebP up to 200 kB, checked by the service).

const LOGO_LIMIT = 204_800
const COLOR = /^#[0-9a-fA-F]{6}$/

/** The logo as this page shows it: its path on this origin (the page's CSP allows 'self' images). */
const pathOf = (url: string): string => new URL(url).pathname

/** What a text field sends: the words trimmed, or null (not set) when it is left empty. */
const orNull = (text: string): string | null => text.trim() === '' ? null : text.trim()

function kB (bytes: number): string {
  return bytes >= 1_000_000 ? t('sizeMB', { size: decimal(bytes / 1_000_000, 1) }) : t('sizeKB', { size: decimal(Math.ceil(bytes / 1000), 0) })
}

function LogoPart ({ look, alt, onSaved }: {
  look: Schemas['WorkspaceBranding'], alt: string, onSaved: (look: Schemas['WorkspaceBranding'], said: string) => void
}) {
  const [problem, setProblem] = useState<Problem | null>(null)
  const [tooBig, setTooBig] = useState<string | null>(null)
  const fail = (p: Problem) => { setProblem(p); announce(p.text) }
  const upload = async (input: HTMLInputElement) => {
    const file = input.files?.[0]
    if (file === undefined) return
    setProblem(null)
    // Said at once, not after sending 5 MB to be refused (the service refuses it too: 413).
    if (file.size > LOGO_LIMIT) {
      const words = t('logoTooBig', { file: file.name, size: kB(file.size) })
      setTooBig(words); announce(words); input.value = ''
      return
    }
    setTooBig(null)
    const r = await call(api.PUT('/api/workspace/branding/logo', { body: file as never }))
    input.value = ''
    if (r.ok) onSaved(r.data, t('logoSaved'))
    else fail(r.problem)
  }
  const remove = async () => {
    const r = await call(api.DELETE('/api/workspace/branding/logo'))
    if (r.ok) { setProblem(null); onSaved(r.data, t('logoRemoved')) } else fail(r.problem)
  }
  const refused = tooBig ?? problem?.text
  return (
    <>
      <h3>{t('logo')}</h3>
      {look.logo !== null
        ? (
          <p class='logo-preview'>
            <img id='look-logo-preview' src={pathOf(look.logo.url)} alt={alt} />
            <span class='muted'> {t('logoFile', { type: look.logo.mediaType.replace('image/', '').toUpperCase(), size: kB(look.logo.size) })}</span>
          </p>
          )
        : <p class='muted' id='look-no-logo'>{t('noLogo')}</p>}
      <label for='look-logo'>{t(look.logo === null ? 'uploadLogo' : 'replaceLogo')}</label>
      <input
        id='look-logo' type='file' accept='image/png,image/jpeg,image/webp'
        aria-describedby={refused !== undefined ? 'look-logo-hint look-logo-error' : 'look-logo-hint'}
        aria-invalid={refused !== undefined ? 'true' : undefined}
        onChange={e => { void upload(e.currentTarget) }}
      />
      <p id='look-logo-hint' class='muted'>{t('logoHint')}</p>
      {refused !== undefined && <p id='look-logo-error' class='field-error' role='alert'>{refused}</p>}
      {look.logo !== null && <p><button type='button' id='look-logo-remove' onClick={() => { void remove() }}>{t('removeLogo')}</button></p>}
    </>
  )
}

function LookForm ({ initial, workspaceName, onChange }: {
  initial: Schemas['WorkspaceBranding'], workspaceName: string, onChange: () => void
}) {
  const [look, setLook] = useState(initial)
  const [displayName, setDisplayName] = useState(initial.displayName ?? '')
  const [accentColor, setAccentColor] = useState(initial.accentColor ?? '')
  const [senderName, setSenderName] = useState(initial.senderName ?? '')
  const form = useFormProblem(['displayName', 'accentColor', 'senderName'])
  const saved = (next: Schemas['WorkspaceBranding'], said: string) => { setLook(next); announce(said); onChange() }
  const save = async () => {
    const r = await call(api.PATCH('/api/workspace/branding', {
      body: { displayName: orNull(displayName), accentColor: orNull(accentColor), senderName: orNull(senderName) }
    }))
    if (r.ok) saved(r.data, t('lookSaved'))
    form.fail(r.ok ? null : r.problem)
  }
  const shown = orNull(displayName) ?? workspaceName
  const sample = COLOR.test(accentColor) ? accentColor : undefined
  return (
    <section class='card' aria-labelledby='look-title'>
      <h2 id='look-title'>{t('look')}</h2>
      <p class='muted'>{t('lookIntro')}</p>
      <form ref={form.form} onSubmit={e => { e.preventDefault(); void save() }}>
        <label for='look-name'>{t('displayName')}</label>
        <input
          id='look-name' maxLength={100} value={displayName} placeholder={workspaceName}
          {...form.control('displayName', 'look-name', 'look-name-hint')} onInput={e => { setDisplayName(e.currentTarget.value) }}
        />
        <p id='look-name-hint' class='muted'>{t('displayNameHint', { name: workspaceName })}</p>
        {form.error('displayName', 'look-name')}
        <label for='look-accent'>{t('accentColour')}</label>
        <input
          id='look-accent' maxLength={7} value={accentColor} placeholder='#1d4ed8' spellcheck={false}
          {...form.control('accentColor', 'look-accent', 'look-accent-hint')} onInput={e => { setAccentColor(e.currentTarget.value) }}
        />
        <p id='look-accent-hint' class='muted'>
          {t('accentHint')}
          {sample !== undefined && <> <span class='swatch' style={{ background: sample }} aria-hidden='true' /></>}
        </p>
        {form.error('accentColor', 'look-accent')}
        <label for='look-sender'>{t('senderName')}</label>
        <input
          id='look-sender' maxLength={100} value={senderName} placeholder={t('senderPlaceholder', { name: shown })}
          {...form.control('senderName', 'look-sender', 'look-sender-hint')} onInput={e => { setSenderName(e.currentTarget.value) }}
        />
        <p id='look-sender-hint' class='muted'>{t('senderHint', { name: shown })}</p>
        {form.error('senderName', 'look-sender')}
        <button type='submit'>{t('saveLook')}</button>
        {form.note}
      </form>
      <LogoPart look={look} alt={look.displayName ?? workspaceName} onSaved={saved} />
    </section>
  )
}

/** The Look card of the Settings screen; `onChange` after a change (the console's header shows the logo). */
export function Look ({ workspaceName, onChange }: { workspaceName: string, onChange: () => void }) {
  const { data, problem, reload } = useCall(async () => await call(api.GET('/api/workspace/branding')), [])
  if (data === null) return <ProblemNote problem={problem} retry={reload} />
  return <LookForm initial={data} workspaceName={workspaceName} onChange={onChange} />
}
